/* Helper processes; see subprocess.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "subprocess.h"

int spawn_self_exe(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

int spawn_program_path(const char *name, char *buf, size_t size)
{
	char self[PATH_MAX];
	char *slash;
	int n;

	if (spawn_self_exe(self, sizeof(self)) >= 0 &&
	    (slash = strrchr(self, '/'))) {
		*slash = '\0';
		n = snprintf(buf, size, "%s/%s", self, name);
		if (n > 0 && (size_t)n < size && access(buf, X_OK) == 0)
			return 0;
	}
	n = snprintf(buf, size, "%s/%s", ICONFS_LIBEXECDIR, name);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return access(buf, X_OK) < 0 ? -errno : 0;
}

int spawn_helper(const char *exe, char *const argv[], const int (*fds)[2],
		 size_t n, bool idle, pid_t *ret_pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, deflt;
	int keep = STDERR_FILENO, r;

	sigemptyset(&none);
	sigfillset(&deflt);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &deflt);
	posix_spawnattr_setflags(&attr,
				 POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	posix_spawn_file_actions_init(&fa);
	for (size_t i = 0; i < n; i++) {
		posix_spawn_file_actions_adddup2(&fa, fds[i][0], fds[i][1]);
		keep = fds[i][1] > keep ? fds[i][1] : keep;
	}
	/* nothing else: not every descriptor of the daemon is close-on-exec
	 * (libfuse's link to fusermount3 for auto_unmount is not) */
	posix_spawn_file_actions_addclosefrom_np(&fa, keep + 1);
	r = posix_spawn(ret_pid, exe, &fa, &attr, argv, environ);
	/* A caller at SCHED_IDLE passes it on by itself. glibc's spawn
	 * attributes refuse SCHED_IDLE (EINVAL), so the new process is
	 * lowered once it runs (its exec is done, its libraries are loading):
	 * where the kernel allows it, never at the cost of the helper. */
	if (r == 0 && idle && sched_getscheduler(0) != SCHED_IDLE)
		(void)sched_setscheduler(*ret_pid, SCHED_IDLE,
					 &(struct sched_param){ 0 });
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	return -r;
}

int spawn_piped(const char *exe, char *const argv[], bool idle, pid_t *ret_pid,
		int *ret_in, int *ret_out)
{
	int to[2] = { -1, -1 }, from[2] = { -1, -1 };
	int r = 0;

	if (pipe2(to, O_CLOEXEC) < 0 || pipe2(from, O_CLOEXEC) < 0)
		r = -errno;
	if (r >= 0)
		r = spawn_helper(exe, argv,
				 (const int[][2]){ { to[0], STDIN_FILENO },
						   { from[1], STDOUT_FILENO } },
				 2, idle, ret_pid);
	(void)close(to[0]);
	(void)close(from[1]);
	if (r < 0) {
		(void)close(to[1]);
		(void)close(from[0]);
		return r;
	}
	*ret_in = to[1];
	*ret_out = from[0];
	return 0;
}
