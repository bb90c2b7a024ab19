/* The index as its users outside indexer/ see it: opening it for a command
 * (create, check, migrate, refresh from the base directories), the enums
 * its rows use (rows.h), and the few read-only queries that the mount and
 * `iconfs status` need. Rows are written only by scan.c (and copied from
 * the machine's index into a layered one by layered.c). */
#pragma once

#include <glib.h>
#include <sqlite3.h>
#include <stdbool.h>

#include "rows.h"
#include "scan.h"


enum index_open_flags {
	INDEX_PROGRESS = 1 << 0, /* progress on a terminal, counts in stats */
	INDEX_CHECK = 1 << 1,	 /* integrity check of the index tables first
				  * (DB_CHECK: skipped while the file is as
				  * the last checked run closed it) */
	INDEX_NOT_LAYERED = 1 << 2, /* never over the machine's index
				     * (--no-shared-db) */
};

/* Open (creating, checking, migrating) the index at `path` and bring it up
 * to date with `basedirs`, layered over the machine's index in the shared
 * layer at `layer` when that serves (NULL: the one it is over, if any;
 * none with INDEX_NOT_LAYERED; layered.h). `watcher` (may be NULL) is told
 * of each directory the refresh looks at; *ret_stats (may be NULL) says
 * what the refresh did. */
int index_open(const char *path, const char *layer, char *const *basedirs,
	       unsigned flags, const struct scan_watcher *watcher,
	       sqlite3 **ret_db, struct scan_stats *ret_stats);

/* index_open() in two steps, for the mount: index_prepare() opens
 * (creates, checks, migrates, layers) the index into *ret, and
 * index_refresh() brings it up to date later, a first login's copy of the
 * machine's index first (layered_copy); the mount makes that refresh
 * once mounted, before it answers, so that the refresh overlaps the start of
 * the login's first programs instead of delaying it. */
struct index_pending {
	sqlite3 *db;
	char *copy_from; /* the shared layer whose machine's index it is to
			  * be started again as the copy of, at the refresh
			  * (layered_copy) */
	bool restarted;	 /* started again as the machine's copy, not yet
			  * refreshed (layered_settled) */
};
int index_prepare(const char *path, const char *layer, char *const *basedirs,
		  unsigned flags, struct index_pending *ret);
int index_refresh(struct index_pending *p, char *const *basedirs,
		  unsigned flags, const struct scan_watcher *watcher,
		  struct scan_stats *ret_stats);
/* Whether `theme` is a valid theme of the prepared index, or of the
 * machine's that it is to be the copy of. */
bool index_pending_theme_valid(const struct index_pending *p,
			       const char *theme);
/* Closes p->db (for _cleanup_). */
void index_pending_done(struct index_pending *p);

/* Another connection to an index index_open() prepared (db_connect()),
 * with the machine's index attached when it is layered over it. */
int index_connect(const char *path, unsigned flags, int busy_ms,
		  sqlite3 **ret);

struct index_stats {
	long long themes, dirs, icons;
	long long refreshed; /* unix seconds of the last refresh, 0: never */
};
int index_stats(sqlite3 *db, struct index_stats *ret);

/* Whether `theme` is a valid theme of the index. */
bool index_theme_valid(sqlite3 *db, const char *theme);

/* The extension (enum icon_ext) of `path` when it is an icon file of a
 * directory of the index, else -ENOENT. */
int index_icon_file(sqlite3 *db, const char *path);

/* Add every icon name and every theme name of the index to `names` (a
 * string set owning its keys). */
int index_all_names(sqlite3 *db, GHashTable *names);
