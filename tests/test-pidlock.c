/* One process at a time (pidlock.h): the first taker holds the lock and
 * says its pid and note in the file; another process is told -EBUSY with
 * that pid and note, and gets the lock once the holder exits (the lock
 * goes with the process, however it ends); waiting takes it as soon as
 * the holder lets go, or -EBUSY at the deadline. Takers are children
 * here: flock(2) locks belong to open files, and a process locking its
 * own file twice would only convert the lock. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

#include "pidlock.h"
#include "test.h"

/* A child that takes the lock at `path` with `note`, writes one byte to
 * `ready` and waits for SIGTERM; its pid. */
static pid_t holder(const char *path, const char *note, int ready)
{
	pid_t pid = fork();

	if (pid == 0) {
		pid_t other;
		int fd = pidlock_take(path, note, &other, NULL);

		if (write(ready, fd >= 0 ? "y" : "n", 1) != 1 || fd < 0)
			_exit(1);
		pause();
		_exit(0);
	}
	return pid;
}

static void stop(pid_t pid)
{
	int status;

	(void)kill(pid, SIGTERM);
	(void)waitpid(pid, &status, 0);
}

/* A fresh lock file's path, in static storage: the children forked here
 * exit without freeing what the test allocated. */
static const char *lock_path(void)
{
	static char dir[64], path[80];

	(void)snprintf(dir, sizeof(dir), "/tmp/pidlock-%d-XXXXXX", (int)getpid());
	if (!mkdtemp(dir))
		return NULL;
	(void)snprintf(path, sizeof(path), "%s/index.lock", dir);
	return path;
}

static void remove_lock(const char *path)
{
	g_autofree char *dir = g_path_get_dirname(path);

	(void)unlink(path);
	(void)rmdir(dir);
}

TEST(held_and_taken_over)
{
	const char *path = lock_path();
	g_autofree char *text = NULL;
	char *note = NULL, c = 0;
	int p[2], fd;
	pid_t pid, other = -1;

	ASSERT_TRUE(pipe(p) == 0);
	pid = holder(path, "/run/user/1000/iconfs", p[1]);
	ASSERT_EQ_INT(read(p[0], &c, 1), 1);
	ASSERT_EQ_INT(c, 'y');
	ASSERT_TRUE(g_file_get_contents(path, &text, NULL, NULL));
	g_autofree char *want = g_strdup_printf("%d\n/run/user/1000/iconfs\n",
						(int)pid);
	ASSERT_EQ_STR(text, want);

	/* held: who holds it, and what for */
	ASSERT_EQ_INT(pidlock_take(path, "mine", &other, &note), -EBUSY);
	ASSERT_EQ_INT(other, pid);
	ASSERT_EQ_STR(note, "/run/user/1000/iconfs");
	free(note);
	/* waiting runs out */
	ASSERT_EQ_INT(pidlock_take_wait(path, "mine", 100, &other), -EBUSY);

	/* the holder goes: the lock with it, however it ended */
	stop(pid);
	fd = pidlock_take(path, "mine", &other, &note);
	ASSERT_TRUE(fd >= 0);
	ASSERT_TRUE(note == NULL);
	ASSERT_TRUE((fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
	g_free(g_steal_pointer(&text));
	ASSERT_TRUE(g_file_get_contents(path, &text, NULL, NULL));
	g_free(want);
	want = g_strdup_printf("%d\nmine\n", (int)getpid());
	ASSERT_EQ_STR(text, want);
	close(fd);
	close(p[0]);
	close(p[1]);
	remove_lock(path);
}

/* pidlock_take_wait gets the lock as soon as the holder lets go. */
TEST(wait_for_holder)
{
	const char *path = lock_path();
	char c = 0;
	int p[2], fd, status;
	pid_t pid, killer, other = -1;

	ASSERT_TRUE(pipe(p) == 0);
	pid = holder(path, "", p[1]);
	ASSERT_EQ_INT(read(p[0], &c, 1), 1);
	ASSERT_EQ_INT(c, 'y');
	/* the holder is stopped a moment after the wait begins */
	killer = fork();
	if (killer == 0) {
		usleep(200 * 1000);
		(void)kill(pid, SIGTERM);
		_exit(0);
	}
	fd = pidlock_take_wait(path, "next", 10000, &other);
	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ_INT(waitpid(pid, &status, 0), pid);
	ASSERT_EQ_INT(waitpid(killer, &status, 0), killer);
	close(fd);
	close(p[0]);
	close(p[1]);
	/* a note is one line */
	ASSERT_EQ_INT(pidlock_take(path, "two\nlines", &other, NULL), -EINVAL);
	remove_lock(path);
}

TEST_MAIN(TEST_CASE(held_and_taken_over), TEST_CASE(wait_for_holder))
