/* Helper processes (subprocess.h): a helper gets the descriptors it is
 * given at the numbers it is given and no other, no blocked signal and
 * every disposition the default whatever the caller's threads set, and
 * with `idle` runs at SCHED_IDLE. The helper here is /bin/sh reporting on
 * itself into the descriptor it was given. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

#include "subprocess.h"
#include "test.h"

/* What the helper says of itself, on its descriptor 5: whether
 * descriptors 5 and 9 are open, its scheduling policy (field 41 of
 * /proc/PID/stat; 5 is SCHED_IDLE), then, as the program it becomes (the
 * shell blocks signals of its own while it waits), its blocked and
 * ignored signals. */
static const char report[] = "exec >&5; [ -e /proc/$$/fd/5 ] && echo fd5; "
			     "[ -e /proc/$$/fd/9 ] && echo fd9; "
			     "echo policy $(cut -d' ' -f41 /proc/$$/stat); "
			     "exec grep -E '^Sig(Blk|Ign)' /proc/self/status";

/* The scheduling policy of process `pid` (a zombie's too); -1. */
static int policy_of(pid_t pid)
{
	g_autofree char *path = g_strdup_printf("/proc/%d/stat", (int)pid);
	g_autofree char *stat = NULL;
	g_auto(GStrv) fields = NULL;
	char *end;

	if (!g_file_get_contents(path, &stat, NULL, NULL) ||
	    !(end = strrchr(stat, ')')))
		return -1;
	/* after "(comm)", fields 3 on: the policy, field 41, is [38] */
	fields = g_strsplit(end + 2, " ", -1);
	return g_strv_length(fields) > 38 ? atoi(fields[38]) : -1;
}

/* Start the helper with a pipe as its descriptor 5, while a copy of the
 * pipe is open as the caller's 9 (not close-on-exec); its report, or NULL.
 * *ret_policy: its policy as the spawn left it, seen by the caller. */
static char *run_policy(bool idle, int *ret_policy)
{
	char *argv[] = { "sh", "-c", (char *)report, NULL };
	GString *out = g_string_new(NULL);
	int p[2], status = -1;
	char buf[256];
	ssize_t n;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0 || dup2(p[1], 9) < 0 ||
	    spawn_helper("/bin/sh", argv, (const int[][2]){ { p[1], 5 } }, 1,
			 idle, &pid) < 0) {
		g_string_free(out, TRUE);
		return NULL;
	}
	*ret_policy = policy_of(pid);
	(void)close(p[1]);
	(void)close(9);
	while ((n = read(p[0], buf, sizeof(buf))) > 0)
		g_string_append_len(out, buf, n);
	(void)close(p[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
		g_string_free(out, TRUE);
		return NULL;
	}
	return g_string_free(out, FALSE);
}

static char *run(bool idle)
{
	int policy;

	return run_policy(idle, &policy);
}

/* The standard signals (1 to 31) of the mask the report's `field` gives;
 * -1 without it. (glibc's spawn ignores its own two real-time signals in
 * the child, whatever it is asked.) */
static long long standard_signals(const char *report_text, const char *field)
{
	const char *line = strstr(report_text, field);

	if (!line)
		return -1;
	return (long long)(g_ascii_strtoull(line + strlen(field), NULL, 16) &
			   0x7fffffffULL);
}

TEST(self_exe)
{
	char buf[PATH_MAX], small[4];
	g_autofree char *want = g_file_read_link("/proc/self/exe", NULL);

	ASSERT_EQ_INT(spawn_self_exe(buf, sizeof(buf)), 0);
	ASSERT_EQ_STR(buf, want);
	ASSERT_TRUE(g_str_has_suffix(buf, "/test-subprocess"));
	/* too small a buffer: cut, and still a string */
	ASSERT_EQ_INT(spawn_self_exe(small, sizeof(small)), 0);
	ASSERT_EQ_INT(strlen(small), 3);
}

TEST(clean_helper)
{
	g_autofree char *out = NULL;
	sigset_t block, old;

	/* as a FUSE thread: signals blocked, one ignored */
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGUSR1);
	ASSERT_EQ_INT(sigprocmask(SIG_BLOCK, &block, &old), 0);
	(void)signal(SIGUSR2, SIG_IGN);
	out = run(false);
	(void)signal(SIGUSR2, SIG_DFL);
	ASSERT_EQ_INT(sigprocmask(SIG_SETMASK, &old, NULL), 0);
	ASSERT_TRUE(out != NULL);
	ASSERT_EQ_INT(standard_signals(out, "SigBlk:"), 0);
	ASSERT_EQ_INT(standard_signals(out, "SigIgn:"), 0);
	ASSERT_TRUE(strstr(out, "fd5\n") != NULL);
	ASSERT_TRUE(strstr(out, "fd9") == NULL);
	/* the caller's priority */
	ASSERT_TRUE(strstr(out, "policy 0\n") != NULL);
}

/* In a child at SCHED_IDLE: 0 when its idle helper is idle too, 77 where
 * it may not be idle, else 1. */
static int idle_child(void)
{
	struct sched_param sp = { 0 };
	char *out;
	int r;

	if (sched_setscheduler(0, SCHED_IDLE, &sp) < 0)
		return 77;
	out = run(true);
	r = out && strstr(out, "policy 5\n") ? 0 : 1;
	g_free(out);
	return r;
}

/* A caller already at SCHED_IDLE passes it on to its helpers (setting it
 * again would be refused to a user). A caller at another policy gets a
 * helper at SCHED_IDLE by the time the spawn returns (glibc's spawn
 * attributes take no SCHED_IDLE: the helper is lowered once it runs). */
TEST(idle_helper)
{
	g_autofree char *out = NULL;
	int status = -1, policy = -1;
	pid_t pid;

	pid = fork(); /* before anything is allocated, for valgrind */
	if (pid == 0)
		_exit(idle_child());
	ASSERT_EQ_INT(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77)
		printf("# SCHED_IDLE not allowed here\n");
	else
		ASSERT_EQ_INT(WEXITSTATUS(status), 0);
	out = run_policy(true, &policy);
	ASSERT_TRUE(out != NULL);
	ASSERT_TRUE(strstr(out, "fd5\n") != NULL);
	ASSERT_EQ_INT(policy, SCHED_IDLE);
}

/* -ENOENT; under valgrind, which makes posix_spawn's vfork a fork, a
 * child that exits 127 at once. */
TEST(no_such_program)
{
	char *argv[] = { "nope", NULL };
	int r, status = -1;
	pid_t pid = -1;

	r = spawn_helper("/no/such/program", argv, NULL, 0, false, &pid);
	if (r == 0) {
		ASSERT_EQ_INT(waitpid(pid, &status, 0), pid);
		ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 127);
	} else
		ASSERT_EQ_INT(r, -ENOENT);
}

TEST_MAIN(TEST_CASE(self_exe), TEST_CASE(clean_helper), TEST_CASE(idle_helper),
	  TEST_CASE(no_such_program))
