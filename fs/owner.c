/* One daemon per index; see owner.h. */
#include <errno.h>
#include <glib.h>
#include <signal.h>
#include <string.h>

#include "log.h"
#include "macro.h"
#include "mountpoint.h"
#include "owner.h"
#include "pidlock.h"

/* How long a daemon asked to stop has to let the index go: its session
 * ends, then it stores what is queued (STORE_DRAIN_MS) and exits. */
#define OWNER_TAKEOVER_MS 10000

int owner_take(const char *db_path, const char *mnt, int *ret_fd)
{
	g_autofree char *lock = g_strconcat(db_path, ".lock", NULL);
	_cleanup_free_ char *theirs = NULL; /* the holder's mountpoint */
	g_autofree char *dir = g_path_get_dirname(db_path);
	pid_t holder;
	int fd;

	*ret_fd = -1;
	(void)g_mkdir_with_parents(dir, 0700);
	fd = pidlock_take(lock, mnt, &holder, &theirs);
	/* an index nobody can write (a read-only directory) needs no lock:
	 * opening it says what is wrong */
	if (fd == -EACCES || fd == -EROFS || fd == -ENOENT || fd == -ENOTDIR)
		return 0;
	if (fd == -EBUSY && (holder <= 0 || !theirs ||
			     mountpoint_state(theirs) == MOUNTPOINT_LIVE)) {
		if (theirs && streq(theirs, mnt))
			return log_error_errno(
				fd, "'%s' is already an iconfs mount (pid %d)",
				mnt, (int)holder);
		return log_error_errno(fd,
				       "the index '%s' is served already, by "
				       "iconfs (pid %d) on '%s'",
				       db_path, (int)holder,
				       theirs ? theirs : "a mount starting");
	}
	if (fd == -EBUSY) {
		log_info("iconfs (pid %d) serves the index '%s' only to a copy "
			 "of its mount '%s' in another mount namespace: "
			 "stopping it, and taking over",
			 (int)holder, db_path, theirs);
		if (kill(holder, SIGTERM) < 0 && errno != ESRCH)
			return log_error_errno(-errno,
					       "cannot stop iconfs (pid %d): %m",
					       (int)holder);
		fd = pidlock_take_wait(lock, mnt, OWNER_TAKEOVER_MS, &holder);
	}
	if (fd < 0)
		return log_error_errno(fd, "cannot take the index '%s': %m",
				       lock);
	*ret_fd = fd;
	return 0;
}
