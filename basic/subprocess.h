/* Starting a helper process (a render worker, the mount's guard, the
 * read ahead, the watchdog's pinger): the file it runs, and a spawn that
 * leaves the caller's blocked signals and handlers behind. Owns nothing. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/* The path of the running binary (/proc/self/exe) into `buf`; -errno. */
int spawn_self_exe(char *buf, size_t size);

/* The helper program `name` into `buf`: beside the running binary (a build
 * tree), else in ICONFS_LIBEXECDIR (installed); -errno when neither is
 * there to run. */
int spawn_program_path(const char *name, char *buf, size_t size);

/* Start `exe` with `argv`, file descriptor fds[i][0] as fds[i][1] in the
 * child (n pairs) beside stdin, stdout and stderr and nothing else, no
 * signal blocked (FUSE threads block some) and every disposition the
 * default; with `idle`, at SCHED_IDLE (from its first instruction when the
 * caller is at SCHED_IDLE already, else from the moment the spawn returns)
 * where the kernel lets this user set it, else at the caller's priority. *ret_pid on
 * success; -errno. */
int spawn_helper(const char *exe, char *const argv[], const int (*fds)[2],
		 size_t n, bool idle, pid_t *ret_pid);

/* spawn_helper() of `exe`, talking on two pipes: *ret_in writes to its
 * stdin, *ret_out reads its stdout. -errno. */
int spawn_piped(const char *exe, char *const argv[], bool idle, pid_t *ret_pid,
		int *ret_in, int *ret_out);
