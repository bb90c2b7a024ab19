/* The scanner's state and the part of it that reads directories into
 * listings (scan-dir.c), shared by scan.c and scan-dir.c only: private to
 * the scan module, see scan.h for its public surface. */
#pragma once

#include <glib.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "basedirs.h"
#include "rows.h"
#include "scan.h"

struct stamp {
	long long ino, mtime_ns, ctime_ns;
};

#define STAMP_MISSING ((struct stamp){ -1, -1, -1 })

struct scanner {
	sqlite3 *db;
	char *const *basedirs;
	struct basedirs_real *real; /* what stays inside the base dirs */
	size_t n_bases;
	unsigned flags;
	struct scan_stats stats;

	sqlite3_stmt *dir_get; /* path → id, stamp */
	/* The dir rows as the refresh found them, path → struct known_dir,
	 * read in one go (a query per directory cost most of a stamp check):
	 * each taken once by dir_row(); emptied by dirs_forget() where the
	 * refresh deletes rows, after which dir_get answers. */
	GHashTable *dirs_known;
	GStringChunk *dirs_paths;
	sqlite3_stmt *dir_insert;
	sqlite3_stmt *dir_set_stamp;
	sqlite3_stmt *dir_set_listing;
	sqlite3_stmt *listing_get; /* (dev, ino) → id, stamp */
	sqlite3_stmt *listing_put;
	sqlite3_stmt *icon_clear;
	sqlite3_stmt *icon_insert;
	GHashTable *listings_read;    /* listing ids read in this refresh */
	struct scan_changes *changes; /* NULL when nobody asks */
	const struct scan_watcher *watcher; /* NULL when nobody watches */
	sqlite3_stmt *listing_names;
};

void changed_theme(struct scanner *s);
/* Tell the watcher (if any) that the refresh is about to look at `dir`. */
void scan_watch(struct scanner *s, const char *dir, bool base);
int dirs_load(struct scanner *s);
void dirs_forget(struct scanner *s);
int stamp_eq(struct stamp a, struct stamp b);
struct stamp stamp_dir(const char *path);
int step_done(struct scanner *s, sqlite3_stmt *stmt);
int exec_bind(struct scanner *s, const char *sql, long long a, long long b);
long long dir_row(struct scanner *s, const char *path, long long basedir_id,
		  long long theme_id, enum dir_kind kind, const char *relpath,
		  struct stamp *ret_stamp);
int dir_refresh(struct scanner *s, long long id, struct stamp old,
		const char *path);
