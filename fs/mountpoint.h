/* What is mounted on the mountpoint, and taking it off: `iconfs mount`
 * clears a crashed daemon's mount before mounting, `iconfs umount`
 * unmounts only iconfs, and a guard process (and the user unit's
 * ExecStopPost) removes the mount of a daemon that died without unmounting,
 * which fusermount3's auto_unmount (3.14) does not do for an unprivileged
 * user. Only ever an iconfs mount of this user: never another user's,
 * never another filesystem. Owns nothing. */
#pragma once

enum mountpoint_state {
	MOUNTPOINT_NONE,    /* nothing is mounted there */
	MOUNTPOINT_LIVE,    /* an iconfs mount of this user that answers */
	MOUNTPOINT_DEAD,    /* an iconfs mount of this user, its daemon gone */
	MOUNTPOINT_FOREIGN, /* another filesystem, or another user's iconfs */
};

/* The state of `mnt` (an absolute path); -errno when the mount table
 * cannot be read. Asks a live mount one question (an xattr of its root):
 * never call it on the mount from the daemon that serves it. */
int mountpoint_state(const char *mnt);

/* Unmount this user's iconfs mount on `mnt`: live (a busy one is tried
 * again for a while; a copy of it left in another mount namespace is cut
 * off too, so that its daemon exits) or dead. -ENOTCONN: nothing mounted there; -EPERM:
 * not an iconfs mount of this user. Errors are logged. */
int mountpoint_unmount(const char *mnt);

/* Remove a dead iconfs mount of this user from `mnt`, leaving anything
 * else alone: 1 when one was removed, 0 when there was none, -errno. */
int mountpoint_clear_dead(const char *mnt);

/* Start the guard of the mount on `mnt`: a process that waits for the
 * daemon to go (the end of *ret_fd, which the daemon holds until it exits)
 * and then clears a dead mount. The program `iconfs-guard` (beside this
 * binary, else in libexecdir), which needs only the C library; without
 * it, this binary again as `iconfs mount-guard`. -errno. */
int mountpoint_guard_start(const char *mnt, int *ret_fd);

/* The guard (`iconfs-guard MNT`, `iconfs mount-guard MNT`): wait for standard input to close,
 * then mountpoint_clear_dead(). With standard input at its end already,
 * as in the unit's ExecStopPost, it clears at once. Exit status. */
int mountpoint_guard_main(const char *mnt);
