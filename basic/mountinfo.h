/* The mount table as this process sees it (/proc/self/mountinfo): what is
 * mounted at a directory, and on which filesystem a path lies. Owns the
 * strings of the entries it returns (mount_entry_clear frees them). */
#pragma once

#include <stdbool.h>

struct mount_entry {
	char *mountpoint; /* unescaped, as the kernel names it */
	char *fstype;	  /* "ext4", "fuse.iconfs", "fuse.sshfs", ... */
	char *source;
	char *options;	  /* the superblock's options: "ro,user_id=1000,..." */
};

void mount_entry_clear(struct mount_entry *e);

/* One line of mountinfo into *ret (caller clears it); -EINVAL when it is
 * not one. */
int mountinfo_parse_line(const char *line, struct mount_entry *ret);

/* The topmost mount whose mount point is `path` (absolute, as the kernel
 * names it: see mountinfo_path), or with `containing`, the mount `path`
 * lies on (the longest mount point that is `path` or one of its parents).
 * 1 and *ret filled, 0 when there is none, -errno. */
int mountinfo_find(const char *path, bool containing, struct mount_entry *ret);

/* `path` as the mount table names it: its parent resolved (links and
 * "..") and its last component appended, so that a dead mount on it,
 * which cannot itself be resolved (ENOTCONN), still matches. Free with
 * free(); NULL and errno set on failure. */
char *mountinfo_path(const char *path);

/* Whether the superblock options `options` hold `key=value`. */
bool mount_options_have(const char *options, const char *key,
			const char *value);
