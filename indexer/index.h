/* The index as its users outside indexer/ see it: opening it for a command
 * (create, check, migrate, refresh from the base directories), the enums
 * its rows use, and the few read-only queries that the mount and
 * `iconfs status` need. Rows are written only by scan.c. */
#pragma once

#include <glib.h>
#include <sqlite3.h>

#include "scan.h"

/* Icon file formats, in the specification's order of preference; stored as
 * icon.ext and bound as such. */
enum icon_ext {
	ICON_EXT_PNG = 0,
	ICON_EXT_SVG = 1,
	ICON_EXT_XPM = 2,
};

/* "png" → ICON_EXT_PNG ...; -1 for any other file-name extension. */
int icon_ext_from_name(const char *ext);
const char *icon_ext_name(int ext);

/* What a row of `dir` is; stored as dir.kind and bound as such. */
enum dir_kind {
	DIR_KIND_BASE = 0,   /* a base directory (unthemed fallback icons) */
	DIR_KIND_ROOT = 1,   /* a theme's root in one base directory */
	DIR_KIND_SUBDIR = 2, /* a listed subdirectory of a theme */
};

enum index_open_flags {
	INDEX_PROGRESS = 1 << 0, /* progress on a terminal, counts in stats */
	INDEX_CHECK = 1 << 1,	 /* integrity check of the index tables first */
};

/* Open (creating, checking, migrating) the index at `path` and bring it up
 * to date with `basedirs`. *ret_stats (may be NULL) says what the refresh
 * did. */
int index_open(const char *path, char *const *basedirs, unsigned flags,
	       sqlite3 **ret_db, struct scan_stats *ret_stats);

struct index_stats {
	long long themes, dirs, icons;
	long long refreshed; /* unix seconds of the last refresh, 0: never */
};
int index_stats(sqlite3 *db, struct index_stats *ret);

/* The paths of every indexed directory that exists and of every theme
 * root: what a watcher of the index watches. */
int index_dirs(sqlite3 *db, GPtrArray **ret);

/* Add every icon name and every theme name of the index to `names` (a
 * string set owning its keys). */
int index_all_names(sqlite3 *db, GHashTable *names);
