/* The mountpoint; see mountpoint.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"
#include "mountinfo.h"
#include "mountpoint.h"
#include "subprocess.h"
#include "view.h"

/* a busy mount (a program inside it, the daemon reading ahead) is tried
 * again for this long */
#define UMOUNT_TRIES	20
#define UMOUNT_WAIT_MS	100

/* the guard's own program (cli/iconfs-guard.c) */
#define GUARD_PROGRAM	"iconfs-guard"

static int run_fusermount(const char *opt, const char *mnt)
{
	pid_t pid;
	int status;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		execlp("fusermount3", "fusermount3", opt, "-q", "--", mnt,
		       (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return -ENOENT; /* no fusermount3 */
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EBUSY;
}

int mountpoint_state(const char *mnt)
{
	_cleanup_free_ char *path = mountinfo_path(mnt);
	struct mount_entry e;
	char uid[32], value[256];
	bool ours;
	int r;

	if (!path)
		return errno == ENOENT ? MOUNTPOINT_NONE : -errno;
	r = mountinfo_find(path, false, &e);
	if (r <= 0)
		return r < 0 ? r : MOUNTPOINT_NONE;
	(void)snprintf(uid, sizeof(uid), "%u", (unsigned)getuid());
	ours = streq(e.fstype, "fuse.iconfs") &&
	       mount_options_have(e.options, "user_id", uid);
	mount_entry_clear(&e);
	if (!ours)
		return MOUNTPOINT_FOREIGN;
	/* an xattr is never cached by the kernel: only a daemon answers */
	if (getxattr(mnt, VIEW_XATTR_THEME, value, sizeof(value)) < 0 &&
	    (errno == ENOTCONN || errno == ECONNABORTED))
		return MOUNTPOINT_DEAD;
	return MOUNTPOINT_LIVE;
}

/* After the unmount of a FUSE mount of superblock `dev`: when its
 * connection is still there, a copy of the mount lives on in another
 * mount namespace (a sandbox, an `unshare -m`) and the daemon with it;
 * abort the connection (fusectl, whose files are the mounting user's), so
 * that the daemon ends its session and exits as after the last unmount. */
static void abort_copies(dev_t dev)
{
	char path[64];
	_cleanup_close_ int fd = -1;

	(void)snprintf(path, sizeof(path), "/sys/fs/fuse/connections/%u/abort",
		       minor(dev));
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return; /* gone with the mount, or no fusectl */
	if (write(fd, "1", 1) == 1)
		log_info("the mount lived on in another mount namespace: its "
			 "daemon stopped serving it");
}

int mountpoint_unmount(const char *mnt)
{
	int r = mountpoint_state(mnt);
	struct stat st = { 0 };

	if (r < 0)
		return log_error_errno(r, "cannot read the mount table: %m");
	switch (r) {
	case MOUNTPOINT_NONE:
		return log_error_errno(-ENOTCONN, "'%s' is not mounted", mnt);
	case MOUNTPOINT_FOREIGN:
		return log_error_errno(-EPERM,
				       "'%s' is not an iconfs mount of this "
				       "user: left alone",
				       mnt);
	case MOUNTPOINT_DEAD:
		r = run_fusermount("-uz", mnt);
		break;
	default:
		if (stat(mnt, &st) < 0)
			st.st_dev = 0;
		for (int i = 0; i < UMOUNT_TRIES; i++) {
			r = run_fusermount("-u", mnt);
			if (r != -EBUSY)
				break;
			(void)usleep(UMOUNT_WAIT_MS * 1000);
		}
	}
	if (r == -ENOENT)
		return log_error_errno(r, "cannot unmount '%s': fusermount3 "
					  "is not installed", mnt);
	if (r < 0)
		return log_error_errno(r, "cannot unmount '%s': %m (a program "
					  "is using it: 'fuser -vm %s' "
					  "names it)",
				       mnt, mnt);
	if (st.st_dev && major(st.st_dev) == 0)
		abort_copies(st.st_dev);
	return 0;
}

int mountpoint_clear_dead(const char *mnt)
{
	int r = mountpoint_state(mnt);

	if (r != MOUNTPOINT_DEAD)
		return r < 0 ? r : 0;
	r = run_fusermount("-uz", mnt);
	if (r < 0)
		return log_error_errno(r, "cannot remove the dead mount on "
					  "'%s': %m", mnt);
	log_info("removed the mount a stopped iconfs left on '%s'", mnt);
	return 1;
}

int mountpoint_guard_start(const char *mnt, int *ret_fd)
{
	char exe[PATH_MAX];
	char *guard_argv[] = { GUARD_PROGRAM, (char *)mnt, NULL };
	char *self_argv[] = { "iconfs", "mount-guard", (char *)mnt, NULL };
	char **argv = guard_argv;
	int p[2], r;
	pid_t pid;

	/* a copy of iconfs without its helpers still guards its mount, as
	 * `iconfs mount-guard`, at the cost of its libraries */
	if (spawn_program_path(GUARD_PROGRAM, exe, sizeof(exe)) < 0) {
		r = spawn_self_exe(exe, sizeof(exe));
		if (r < 0)
			return r;
		argv = self_argv;
	}
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	r = spawn_helper(exe, argv, (const int[][2]){ { p[0], STDIN_FILENO } },
			 1, false, &pid);
	(void)close(p[0]);
	if (r < 0) {
		(void)close(p[1]);
		return r;
	}
	*ret_fd = p[1];
	return 0;
}

int mountpoint_guard_main(const char *mnt)
{
	char buf[64];
	ssize_t n;

	/* the terminal's signals are for the daemon, which unmounts */
	(void)signal(SIGINT, SIG_IGN);
	(void)signal(SIGHUP, SIG_IGN);
	do
		n = read(STDIN_FILENO, buf, sizeof(buf));
	while (n > 0 || (n < 0 && errno == EINTR));
	return mountpoint_clear_dead(mnt) < 0 ? 1 : 0;
}
