/* Going to the background (daemon.h): the command (a child of the test
 * here) exits with the status its daemon reports, or 1 when the daemon
 * dies before it reports; the daemon has a session of its own, stdin,
 * stdout and stderr on /dev/null, a close-on-exec pipe to report on, and
 * once serving, / for its working directory. The daemon tells the test
 * what it saw on a pipe of the test's. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

#include "daemon.h"
#include "test.h"

/* Whether fd is /dev/null. */
static bool is_null(int fd)
{
	struct stat st, null;

	return fstat(fd, &st) == 0 && stat("/dev/null", &null) == 0 &&
	       S_ISCHR(st.st_mode) && st.st_rdev == null.st_rdev;
}

/* The daemon: report what it is to `out`, then daemon_ready(`status`), or
 * with status < 0, die before it. */
static void daemon_side(int fd, int out, int status)
{
	char cwd[PATH_MAX], line[PATH_MAX + 128];
	int none = -1, cloexec = fcntl(fd, F_GETFD) & FD_CLOEXEC;
	bool own_session = getsid(0) == getpid();
	bool nulls = is_null(0) && is_null(1) && is_null(2);

	if (status < 0)
		_exit(0);
	/* no report channel: a no-op, the directory stays */
	daemon_ready(&none, 0);
	daemon_ready(&fd, status);
	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = '\0';
	(void)snprintf(line, sizeof(line),
		       "session %d nulls %d cloexec %d fd %d none %d cwd %s",
		       own_session, nulls, cloexec != 0, fd, none, cwd);
	(void)write(out, line, strlen(line));
	_exit(0);
}

/* Run the command in a child, from directory `dir`, its daemon reporting
 * `status`; the command's exit status, the daemon's report in `report`. */
static int command(const char *dir, int status, char *report, size_t size)
{
	int p[2], wstatus = -1, fd = -1;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	if (pipe(p) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		(void)close(p[0]);
		if (chdir(dir) < 0 || daemon_begin(&fd) < 0)
			_exit(99);
		daemon_side(fd, p[1], status);
	}
	(void)close(p[1]);
	if (waitpid(pid, &wstatus, 0) != pid || !WIFEXITED(wstatus))
		return -1;
	/* until the daemon exits */
	while (len + 1 < size &&
	       (n = read(p[0], report + len, size - len - 1)) > 0)
		len += (size_t)n;
	report[len] = '\0';
	(void)close(p[0]);
	return WEXITSTATUS(wstatus);
}

TEST(serving)
{
	g_autofree char *dir = g_dir_make_tmp("iconfs-test-XXXXXX", NULL);
	char report[PATH_MAX + 128];

	ASSERT_EQ_INT(command(dir, 0, report, sizeof(report)), 0);
	ASSERT_EQ_STR(report,
		      "session 1 nulls 1 cloexec 1 fd -1 none -1 cwd /");
	(void)rmdir(dir);
}

TEST(not_serving)
{
	g_autofree char *dir = g_dir_make_tmp("iconfs-test-XXXXXX", NULL);
	g_autofree char *want = NULL;
	char report[PATH_MAX + 128];

	/* the status the daemon reports; the directory stays */
	ASSERT_EQ_INT(command(dir, 7, report, sizeof(report)), 7);
	want = g_strdup_printf(
		"session 1 nulls 1 cloexec 1 fd -1 none -1 cwd %s", dir);
	ASSERT_EQ_STR(report, want);
	(void)rmdir(dir);
}

TEST(died_before_ready)
{
	g_autofree char *dir = g_dir_make_tmp("iconfs-test-XXXXXX", NULL);
	char report[64];

	ASSERT_EQ_INT(command(dir, -1, report, sizeof(report)), 1);
	ASSERT_EQ_STR(report, "");
	(void)rmdir(dir);
}

TEST_MAIN(TEST_CASE(serving), TEST_CASE(not_serving),
	  TEST_CASE(died_before_ready))
