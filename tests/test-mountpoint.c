/* The mountpoint (mountpoint.h): what is mounted there, and that only a
 * dead iconfs mount of this user is ever taken off. fusermount3 is a
 * stand-in here (first on PATH) that writes down how it was called: the
 * tests never unmount anything, and prove what would have been run. A
 * dead mount is made where the kernel lets this process make one (as
 * root, with /dev/fuse): a FUSE mount whose device is closed, in a mount
 * namespace of its own. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "mountpoint.h"
#include "test.h"

struct ctx {
	char *dir; /* a temporary directory: mountpoints go below it */
	char *log; /* what the stand-in fusermount3 was called with */
	char *old_path;
};

static int setup(struct ctx *c)
{
	g_autofree char *bin = NULL, *fake = NULL, *script = NULL, *path = NULL;

	c->dir = g_dir_make_tmp("iconfs-test-XXXXXX", NULL);
	c->log = g_build_filename(c->dir, "fusermount3.log", NULL);
	bin = g_build_filename(c->dir, "bin", NULL);
	fake = g_build_filename(bin, "fusermount3", NULL);
	script = g_strdup_printf("#!/bin/sh\necho \"$@\" >> '%s'\n", c->log);
	c->old_path = g_strdup(g_getenv("PATH"));
	path = g_strdup_printf("%s:%s", bin, c->old_path ? c->old_path : "");
	if (g_mkdir(bin, 0755) < 0 ||
	    !g_file_set_contents(fake, script, -1, NULL) ||
	    chmod(fake, 0755) < 0)
		return -1;
	return g_setenv("PATH", path, TRUE) ? 0 : -1;
}

/* Free c's memory: at the end of a test, and in a child before it exits
 * (as valgrind would have it). */
static void clear(struct ctx *c)
{
	g_free(c->dir);
	g_free(c->log);
	g_free(c->old_path);
}

static void teardown(struct ctx *c)
{
	char *argv[] = { "rm", "-rf", c->dir, NULL };

	g_setenv("PATH", c->old_path ? c->old_path : "/usr/bin:/bin", TRUE);
	g_spawn_sync(NULL, argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL,
		     NULL, NULL, NULL);
	clear(c);
}

/* How fusermount3 was called so far ("" for never). */
static char *calls(struct ctx *c)
{
	char *text = NULL;

	if (!g_file_get_contents(c->log, &text, NULL, NULL))
		return g_strdup("");
	return text;
}

TEST(nothing_mounted)
{
	struct ctx c = { 0 };
	g_autofree char *missing = NULL, *log = NULL;

	ASSERT_EQ_INT(setup(&c), 0);
	missing = g_build_filename(c.dir, "no", "such", NULL);
	ASSERT_EQ_INT(mountpoint_state(c.dir), MOUNTPOINT_NONE);
	ASSERT_EQ_INT(mountpoint_state(missing), MOUNTPOINT_NONE);
	ASSERT_EQ_INT(mountpoint_unmount(c.dir), -ENOTCONN);
	ASSERT_EQ_INT(mountpoint_clear_dead(c.dir), 0);
	ASSERT_EQ_INT(mountpoint_clear_dead(missing), 0);
	log = calls(&c);
	ASSERT_EQ_STR(log, "");
	teardown(&c);
}

TEST(foreign_left_alone)
{
	struct ctx c = { 0 };
	g_autofree char *log = NULL;

	ASSERT_EQ_INT(setup(&c), 0);
	/* /proc: a mount, not iconfs, wherever the mount table can be read
	 * at all (a package build's chroot has no /dev/shm, say) */
	ASSERT_EQ_INT(mountpoint_state("/proc"), MOUNTPOINT_FOREIGN);
	ASSERT_EQ_INT(mountpoint_unmount("/proc"), -EPERM);
	ASSERT_EQ_INT(mountpoint_clear_dead("/proc"), 0);
	log = calls(&c);
	ASSERT_EQ_STR(log, "");
	teardown(&c);
}

/* Run the guard on c->dir with standard input the read end of a pipe;
 * *ret_w is its write end. */
static pid_t guard(struct ctx *c, int *ret_w)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		int r;

		(void)dup2(p[0], STDIN_FILENO);
		(void)close(p[1]);
		r = mountpoint_guard_main(c->dir);
		clear(c);
		_exit(r);
	}
	(void)close(p[0]);
	*ret_w = p[1];
	return pid;
}

TEST(guard_waits_for_the_daemon)
{
	struct ctx c = { 0 };
	g_autofree char *log = NULL;
	int w = -1, status = -1;
	pid_t pid;

	ASSERT_EQ_INT(setup(&c), 0);
	pid = guard(&c, &w);
	ASSERT_TRUE(pid > 0);
	/* the daemon holds the other end: the guard waits, even through a
	 * byte written to it */
	ASSERT_EQ_INT(write(w, "x", 1), 1);
	(void)usleep(100 * 1000);
	ASSERT_EQ_INT(waitpid(pid, &status, WNOHANG), 0);
	/* the daemon went: the guard finds nothing to clear and exits 0 */
	(void)close(w);
	ASSERT_EQ_INT(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ_INT(WEXITSTATUS(status), 0);
	log = calls(&c);
	ASSERT_EQ_STR(log, "");
	teardown(&c);
}

/* In a mount namespace of its own: a FUSE mount of type `fstype` owned by
 * `uid` on `mnt`, its device closed (its daemon gone). 0, or -1 where this
 * process may not mount. */
static int dead_mount(const char *mnt, const char *fstype, unsigned uid)
{
	g_autofree char *opts = NULL;
	int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -1;
	opts = g_strdup_printf("fd=%d,rootmode=40000,user_id=%u,group_id=%u",
			       fd, uid, (unsigned)getgid());
	if (mount("iconfs", mnt, fstype, MS_NOSUID | MS_NODEV, opts) < 0) {
		(void)close(fd);
		return -1;
	}
	(void)close(fd);
	return 0;
}

/* The checks of dead_mounts, in a child in its own mount namespace: its
 * exit status is 0, 77 where it may not mount, else the failed check. */
static int dead_mounts_child(struct ctx *c)
{
	g_autofree char *ours = g_build_filename(c->dir, "ours", NULL);
	g_autofree char *other = g_build_filename(c->dir, "other", NULL);
	g_autofree char *notours = g_build_filename(c->dir, "notours", NULL);
	g_autofree char *log = NULL, *want = NULL;

	if (unshare(CLONE_NEWNS) < 0 ||
	    mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0)
		return 77;
	(void)g_mkdir(ours, 0755);
	(void)g_mkdir(other, 0755);
	(void)g_mkdir(notours, 0755);
	if (dead_mount(ours, "fuse.iconfs", getuid()) < 0 ||
	    dead_mount(other, "fuse.iconfs", getuid() + 1) < 0 ||
	    dead_mount(notours, "fuse.other", getuid()) < 0)
		return 77;
	if (mountpoint_state(ours) != MOUNTPOINT_DEAD)
		return 1;
	/* another user's iconfs, another FUSE filesystem: not ours */
	if (mountpoint_state(other) != MOUNTPOINT_FOREIGN ||
	    mountpoint_state(notours) != MOUNTPOINT_FOREIGN)
		return 2;
	if (mountpoint_clear_dead(other) != 0 ||
	    mountpoint_clear_dead(notours) != 0 ||
	    mountpoint_unmount(other) != -EPERM)
		return 3;
	/* ours is taken off, lazily (it cannot answer) */
	if (mountpoint_clear_dead(ours) != 1 || mountpoint_unmount(ours) != 0)
		return 4;
	log = calls(c);
	want = g_strdup_printf("-uz -q -- %s\n-uz -q -- %s\n", ours, ours);
	return streq(log, want) ? 0 : 5;
}

TEST(dead_mounts)
{
	struct ctx c = { 0 };
	int status = -1;
	pid_t pid;

	ASSERT_EQ_INT(setup(&c), 0);
	pid = fork();
	if (pid == 0) {
		int r = dead_mounts_child(&c);

		clear(&c);
		_exit(r);
	}
	ASSERT_EQ_INT(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77)
		printf("# no dead mount made here: not root, or no "
		       "/dev/fuse\n");
	else
		ASSERT_EQ_INT(WEXITSTATUS(status), 0);
	teardown(&c);
}

TEST_MAIN(TEST_CASE(nothing_mounted), TEST_CASE(foreign_left_alone),
	  TEST_CASE(guard_waits_for_the_daemon), TEST_CASE(dead_mounts))
