/* One process at a time: a lock file held for the holder's lifetime
 * (flock, so it goes with the process however it ends) that holds the
 * holder's pid and a line of its own, so that another can tell who has it
 * and what for. The mount takes one beside its index (fs/owner.h). */
#pragma once

#include <sys/types.h>

/* Take the lock at `path` (created 0600 when missing) and write this
 * process's pid and `note` (one line) into it: the descriptor to keep
 * open (O_CLOEXEC; the lock goes when it is closed), or -EBUSY with
 * *ret_holder the pid that holds it (0 when it has not said yet) and, when
 * ret_note is not NULL, its note (free(); NULL for none), or another
 * -errno. */
int pidlock_take(const char *path, const char *note, pid_t *ret_holder,
		 char **ret_note);

/* The same, waiting at most `timeout_ms` for the holder to let go. */
int pidlock_take_wait(const char *path, const char *note, unsigned timeout_ms,
		      pid_t *ret_holder);
