/* Filling and refreshing the index from the base directories. This is the
 * only code that writes theme, subdir, dir and icon rows.
 *
 * A refresh stats every directory the index knows (base dirs, theme roots,
 * listed subdirectories, index.theme files) and reads only those whose
 * stamp (inode, mtime, ctime) changed; on an empty index that is a full
 * scan. It runs in one transaction: readers see the old or the new index.
 * Problems with single files or directories are logged and cost only them. */
#pragma once

#include <glib.h>
#include <sqlite3.h>
#include <stdbool.h>

struct scan_stats {
	unsigned themes;	  /* themes with an index.theme */
	unsigned dirs_read;	  /* directories read this time */
	unsigned long long icons; /* distinct (directory, name, ext) */
	unsigned problems; /* files or directories skipped with a log line */
	bool changed;	   /* anything in the index changed */
	double seconds;
};

/* What a refresh changed, for the mount's kernel-cache invalidation. */
struct scan_changes {
	GHashTable *names; /* icon names added to or removed from a directory
			    * (string set, owned by the caller) */
	bool themes;	   /* themes, their roots or index.theme files changed:
			    * any resolution may have changed */
};

enum scan_flags {
	SCAN_PROGRESS = 1 << 0, /* progress on stderr (a terminal) */
	SCAN_COUNT = 1 << 1,	/* fill themes and icons in the stats */
};

/* Told of every directory a refresh looks at (each base directory, theme
 * root and listed subdirectory, whether it exists or not) just before it
 * looks: a watch set up then misses no change the refresh does not see. */
struct scan_watcher {
	void (*watch)(const char *dir, bool base, void *userdata);
	void *userdata;
};

/* `changes` may be NULL; when given, its set is filled. `watcher` may be
 * NULL. */
int scan_refresh(sqlite3 *db, char *const *basedirs, unsigned flags,
		 const struct scan_watcher *watcher,
		 struct scan_stats *ret_stats, struct scan_changes *changes);
