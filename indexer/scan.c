/* The indexer's scan and stamp-driven refresh; see scan.h. */
#include <dirent.h>
#include <errno.h>
#include <glib.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "basedirs.h"
#include "db.h"
#include "index.h"
#include "log.h"
#include "scan.h"
#include "theme.h"
#include "time-util.h"

struct stamp {
	long long ino, mtime_ns, ctime_ns;
};

static const struct stamp stamp_missing = { -1, -1, -1 };

struct scanner {
	sqlite3 *db;
	char *const *basedirs;
	struct basedirs_real *real; /* what stays inside the base dirs */
	size_t n_bases;
	unsigned flags;
	struct scan_stats stats;

	sqlite3_stmt *dir_get; /* path → id, stamp */
	sqlite3_stmt *dir_insert;
	sqlite3_stmt *dir_set_stamp;
	sqlite3_stmt *dir_set_listing;
	sqlite3_stmt *listing_get; /* (dev, ino) → id, stamp */
	sqlite3_stmt *listing_put;
	sqlite3_stmt *icon_clear;
	sqlite3_stmt *icon_insert;
	GHashTable *listings_read;    /* listing ids read in this refresh */
	struct scan_changes *changes; /* NULL when nobody asks */
	sqlite3_stmt *listing_names;
};

static void changed_theme(struct scanner *s)
{
	s->stats.changed = true;
	if (s->changes)
		s->changes->themes = true;
}

static void changed_name(struct scanner *s, const char *name)
{
	if (s->changes && !g_hash_table_contains(s->changes->names, name))
		g_hash_table_add(s->changes->names, g_strdup(name));
}

/* The names in listing `id`, as a new set (or NULL when nobody asks). */
static GHashTable *listing_names(struct scanner *s, long long id)
{
	GHashTable *set;

	if (!s->changes || id < 0)
		return NULL;
	set = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	sqlite3_bind_int64(s->listing_names, 1, id);
	while (sqlite3_step(s->listing_names) == SQLITE_ROW)
		g_hash_table_add(set,
				 g_strdup(db_column_str(s->listing_names, 0)));
	(void)sqlite3_reset(s->listing_names);
	return set;
}

static void changed_names_of(struct scanner *s, long long listing_id)
{
	g_autoptr(GHashTable) set = listing_names(s, listing_id);
	GHashTableIter it;
	const char *name;

	if (!set)
		return;
	g_hash_table_iter_init(&it, set);
	while (g_hash_table_iter_next(&it, (void **)&name, NULL))
		changed_name(s, name);
}

static struct stamp stamp_of(const struct stat *st)
{
	return (struct stamp){ (long long)st->st_ino, timespec_ns(st->st_mtim),
			       timespec_ns(st->st_ctim) };
}

static int stamp_eq(struct stamp a, struct stamp b)
{
	return a.ino == b.ino && a.mtime_ns == b.mtime_ns &&
	       a.ctime_ns == b.ctime_ns;
}

/* stat() a directory; a missing or non-directory path gives stamp_missing. */
static struct stamp stamp_dir(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
		return stamp_missing;
	return stamp_of(&st);
}

static int step_done(struct scanner *s, sqlite3_stmt *stmt)
{
	int rc = sqlite3_step(stmt);
	(void)sqlite3_reset(stmt);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return db_log_error(s->db, rc, "cannot update index");
	return 0;
}

static int exec_bind(struct scanner *s, const char *sql, long long a,
		     long long b)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *stmt = NULL;
	int r = db_prepare(s->db, sql, &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, a);
	sqlite3_bind_int64(stmt, 2, b);
	return step_done(s, stmt);
}

/* Find or create the dir row for `path`. Returns its id; *ret_stamp gets
 * the stored stamp (stamp_missing for a new row). */
static long long dir_row(struct scanner *s, const char *path,
			 long long basedir_id, long long theme_id,
			 enum dir_kind kind, const char *relpath,
			 struct stamp *ret_stamp)
{
	long long id = -1;
	int rc;

	sqlite3_bind_text(s->dir_get, 1, path, -1, SQLITE_STATIC);
	rc = sqlite3_step(s->dir_get);
	if (rc == SQLITE_ROW) {
		id = sqlite3_column_int64(s->dir_get, 0);
		ret_stamp->ino = sqlite3_column_int64(s->dir_get, 1);
		ret_stamp->mtime_ns = sqlite3_column_int64(s->dir_get, 2);
		ret_stamp->ctime_ns = sqlite3_column_int64(s->dir_get, 3);
	}
	(void)sqlite3_reset(s->dir_get);
	if (id >= 0)
		return id;

	sqlite3_bind_int64(s->dir_insert, 1, basedir_id);
	if (theme_id >= 0)
		sqlite3_bind_int64(s->dir_insert, 2, theme_id);
	else
		sqlite3_bind_null(s->dir_insert, 2);
	sqlite3_bind_int(s->dir_insert, 3, kind);
	sqlite3_bind_text(s->dir_insert, 4, relpath, -1, SQLITE_STATIC);
	sqlite3_bind_text(s->dir_insert, 5, path, -1, SQLITE_STATIC);
	if (step_done(s, s->dir_insert) < 0)
		return -1;
	*ret_stamp = stamp_missing;
	if (kind == DIR_KIND_ROOT)
		changed_theme(s);
	s->stats.changed = true;
	return sqlite3_last_insert_rowid(s->db);
}

static int dir_set_stamp(struct scanner *s, long long id, struct stamp st)
{
	sqlite3_bind_int64(s->dir_set_stamp, 1, st.ino);
	sqlite3_bind_int64(s->dir_set_stamp, 2, st.mtime_ns);
	sqlite3_bind_int64(s->dir_set_stamp, 3, st.ctime_ns);
	sqlite3_bind_int64(s->dir_set_stamp, 4, id);
	return step_done(s, s->dir_set_stamp);
}

/* A symlinked icon is served only when its target stays inside one of the
 * base directories. */
static int target_allowed(struct scanner *s, const char *path)
{
	_cleanup_free_ char *real = basedirs_real_inside(s->real, path, false);

	return real != NULL;
}

/* Split "name.ext" into the name length and the extension index. */
static int icon_file_name(const char *file, size_t *ret_len)
{
	const char *dot = strrchr(file, '.');
	int ext;

	if (!dot || dot == file)
		return -1;
	ext = icon_ext_from_name(dot + 1);
	if (ext < 0)
		return -1;
	*ret_len = dot - file;
	return ext;
}

/* Replace the icons of listing `id` with the icon files in `path`. */
static int listing_read(struct scanner *s, long long id, const char *path)
{
	g_autoptr(GHashTable) old = listing_names(s, id);
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	int r;

	sqlite3_bind_int64(s->icon_clear, 1, id);
	r = step_done(s, s->icon_clear);
	if (r < 0)
		return r;
	s->stats.changed = true;
	s->stats.dirs_read++;

	d = opendir(path);
	if (!d) {
		if (errno != ENOENT && errno != ENOTDIR) {
			s->stats.problems++;
			log_warning_errno(-errno, "cannot read '%s': %m", path);
		}
		return 0;
	}
	while ((errno = 0, de = readdir(d))) {
		char name[NAME_MAX + 1];
		size_t len;
		int ext = icon_file_name(de->d_name, &len);

		if (ext < 0)
			continue;
		if (de->d_type != DT_REG) {
			g_autofree char *full =
				g_build_filename(path, de->d_name, NULL);
			struct stat st;

			if (de->d_type != DT_LNK && de->d_type != DT_UNKNOWN)
				continue;
			if (stat(full, &st) < 0 || !S_ISREG(st.st_mode))
				continue;
			if (de->d_type == DT_LNK && !target_allowed(s, full)) {
				s->stats.problems++;
				log_warning("'%s' points outside the icon "
					    "directories, skipped",
					    full);
				continue;
			}
		}
		memcpy(name, de->d_name, len);
		name[len] = '\0';
		if (old && !g_hash_table_remove(old, name))
			changed_name(s, name);
		sqlite3_bind_text(s->icon_insert, 1, name, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s->icon_insert, 2, id);
		sqlite3_bind_int(s->icon_insert, 3, ext);
		r = step_done(s, s->icon_insert);
		if (r < 0)
			return r;
	}
	if (errno != 0) {
		s->stats.problems++;
		log_warning_errno(-errno, "cannot read '%s': %m", path);
	}
	if (old) {
		GHashTableIter it;
		const char *gone;

		g_hash_table_iter_init(&it, old);
		while (g_hash_table_iter_next(&it, (void **)&gone, NULL))
			changed_name(s, gone);
	}
	return 0;
}

/* Point dir row `dir_id` at the listing of the real directory `st` is of,
 * reading it when it is new or its stamp changed (once per refresh, however
 * many paths lead to it). */
static int dir_attach_listing(struct scanner *s, long long dir_id,
			      const char *path, const struct stat *st)
{
	long long id = -1, mtime = timespec_ns(st->st_mtim),
		  ctime = timespec_ns(st->st_ctim);
	bool read = false;
	int rc, r;

	sqlite3_bind_int64(s->listing_get, 1, (long long)st->st_dev);
	sqlite3_bind_int64(s->listing_get, 2, (long long)st->st_ino);
	rc = sqlite3_step(s->listing_get);
	if (rc == SQLITE_ROW) {
		id = sqlite3_column_int64(s->listing_get, 0);
		read = (sqlite3_column_int64(s->listing_get, 1) != mtime ||
			sqlite3_column_int64(s->listing_get, 2) != ctime) &&
		       !g_hash_table_contains(s->listings_read, &id);
	}
	(void)sqlite3_reset(s->listing_get);

	sqlite3_bind_int64(s->listing_put, 1, (long long)st->st_dev);
	sqlite3_bind_int64(s->listing_put, 2, (long long)st->st_ino);
	sqlite3_bind_int64(s->listing_put, 3, mtime);
	sqlite3_bind_int64(s->listing_put, 4, ctime);
	if (id < 0 || read) {
		rc = sqlite3_step(s->listing_put);
		if (rc == SQLITE_ROW)
			id = sqlite3_column_int64(s->listing_put, 0);
		(void)sqlite3_reset(s->listing_put);
		if (id < 0)
			return db_log_error(s->db, rc, "cannot update index");
		r = listing_read(s, id, path);
		if (r < 0)
			return r;
		g_hash_table_add(s->listings_read, g_memdup2(&id, sizeof(id)));
	}

	sqlite3_bind_int64(s->dir_set_listing, 1, id);
	sqlite3_bind_int64(s->dir_set_listing, 2, dir_id);
	return step_done(s, s->dir_set_listing);
}

/* A directory reached through a symlink must stay inside the base
 * directories too. */
static bool dir_inside(struct scanner *s, const char *path)
{
	_cleanup_free_ char *real = basedirs_real_inside(s->real, path, true);

	return real != NULL;
}

/* Refresh a directory row: stat, and attach its listing again when its
 * stamp changed. */
static long long dir_listing_id(struct scanner *s, long long id)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;

	if (db_prepare(s->db, "SELECT listing_id FROM dir WHERE id = ?1", &q) <
	    0)
		return -1;
	sqlite3_bind_int64(q, 1, id);
	if (sqlite3_step(q) != SQLITE_ROW ||
	    sqlite3_column_type(q, 0) == SQLITE_NULL)
		return -1;
	return sqlite3_column_int64(q, 0);
}

/* A directory row that lists nothing (gone, or leading outside): its old
 * names changed. */
static int dir_detach(struct scanner *s, long long id, long long listing_id,
		      struct stamp stamp)
{
	int r;

	changed_names_of(s, listing_id);
	sqlite3_bind_null(s->dir_set_listing, 1);
	sqlite3_bind_int64(s->dir_set_listing, 2, id);
	r = step_done(s, s->dir_set_listing);
	if (r < 0)
		return r;
	return dir_set_stamp(s, id, stamp);
}

static int dir_refresh(struct scanner *s, long long id, struct stamp old,
		       const char *path)
{
	long long before = s->changes ? dir_listing_id(s, id) : -1, after;
	struct stamp now;
	struct stat st;
	int r;

	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
		if (stamp_eq(old, stamp_missing))
			return 0;
		s->stats.changed = true;
		return dir_detach(s, id, before, stamp_missing);
	}
	now = stamp_of(&st);
	if (stamp_eq(now, old))
		return 0;
	s->stats.changed = true;
	if (!dir_inside(s, path)) {
		s->stats.problems++;
		log_warning("'%s' leads outside the icon directories, skipped",
			    path);
		return dir_detach(s, id, before, now);
	}
	r = dir_attach_listing(s, id, path, &st);
	if (r < 0)
		return r;
	after = s->changes ? dir_listing_id(s, id) : -1;
	if (before != after) {
		changed_names_of(s, before);
		changed_names_of(s, after);
	}
	return dir_set_stamp(s, id, now);
}

static long long theme_id_for(struct scanner *s, const char *name)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *stmt = NULL;
	long long id = -1;

	if (db_prepare(s->db,
		       "INSERT INTO theme(name) VALUES (?1) "
		       "ON CONFLICT(name) DO UPDATE SET name = name "
		       "RETURNING id",
		       &stmt) < 0)
		return -1;
	sqlite3_bind_text(stmt, 1, name, -1, SQLITE_STATIC);
	if (sqlite3_step(stmt) == SQLITE_ROW)
		id = sqlite3_column_int64(stmt, 0);
	return id;
}

/* Read a base directory: its unthemed icons and the list of theme roots. */
static int base_read(struct scanner *s, long long base_id, const char *base)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *roots = NULL;
	_cleanup_closedir_ DIR *d = NULL;
	g_autoptr(GHashTable) present =
		g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	struct dirent *de;
	int r;

	d = opendir(base);
	while (d && (de = readdir(d))) {
		g_autofree char *full = NULL;
		struct stamp old;
		struct stat st;
		long long tid;

		if (de->d_name[0] == '.' &&
		    (!de->d_name[1] ||
		     (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		if (de->d_type != DT_DIR && de->d_type != DT_LNK &&
		    de->d_type != DT_UNKNOWN)
			continue;
		full = g_build_filename(base, de->d_name, NULL);
		if (de->d_type != DT_DIR &&
		    (stat(full, &st) < 0 || !S_ISDIR(st.st_mode)))
			continue;
		tid = theme_id_for(s, de->d_name);
		if (tid < 0)
			return -EIO;
		if (dir_row(s, full, base_id, tid, DIR_KIND_ROOT, "", &old) < 0)
			return -EIO;
		g_hash_table_add(present, g_strdup(full));
	}

	/* Roots that are gone take their subdirectories with them. */
	r = db_prepare(s->db,
		       "SELECT id, path, theme_id FROM dir "
		       "WHERE basedir_id = ?1 AND kind = ?2",
		       &roots);
	if (r < 0)
		return r;
	sqlite3_bind_int64(roots, 1, base_id);
	sqlite3_bind_int(roots, 2, DIR_KIND_ROOT);
	while (sqlite3_step(roots) == SQLITE_ROW) {
		if (g_hash_table_contains(present, db_column_str(roots, 1)))
			continue;
		r = exec_bind(s,
			      "DELETE FROM dir WHERE basedir_id = ?1 AND "
			      "theme_id = ?2",
			      base_id, sqlite3_column_int64(roots, 2));
		if (r < 0)
			return r;
		changed_theme(s);
	}
	return 0;
}

static int bases_sync(struct scanner *s)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *up = NULL;
	int r;

	r = db_exec(s->db, "UPDATE basedir SET pos = -1 - pos");
	if (r < 0)
		return db_log_errno(s->db, r, "cannot update base dirs");
	r = db_prepare(s->db,
		       "INSERT INTO basedir(path, pos) VALUES (?1, ?2) "
		       "ON CONFLICT(path) DO UPDATE SET pos = excluded.pos",
		       &up);
	if (r < 0)
		return r;
	for (size_t i = 0; i < s->n_bases; i++) {
		sqlite3_bind_text(up, 1, s->basedirs[i], -1, SQLITE_STATIC);
		sqlite3_bind_int64(up, 2, (long long)i);
		r = step_done(s, up);
		if (r < 0)
			return r;
	}
	r = db_exec(s->db, "DELETE FROM basedir WHERE pos < 0");
	if (r < 0)
		return db_log_errno(s->db, r, "cannot update base dirs");
	if (sqlite3_changes(s->db) > 0)
		changed_theme(s);
	return 0;
}

static int bases_refresh(struct scanner *s)
{
	for (size_t i = 0; i < s->n_bases; i++) {
		_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
		const char *base = s->basedirs[i];
		struct stamp old, now;
		long long base_id, dir_id;
		int r;

		r = db_prepare(s->db, "SELECT id FROM basedir WHERE path = ?1",
			       &q);
		if (r < 0)
			return r;
		sqlite3_bind_text(q, 1, base, -1, SQLITE_STATIC);
		if (sqlite3_step(q) != SQLITE_ROW)
			return -EIO;
		base_id = sqlite3_column_int64(q, 0);

		dir_id = dir_row(s, base, base_id, -1, DIR_KIND_BASE, "", &old);
		if (dir_id < 0)
			return -EIO;
		now = stamp_dir(base);
		if (stamp_eq(now, old))
			continue;
		r = dir_refresh(s, dir_id, old, base);
		if (r < 0)
			return r;
		r = base_read(s, base_id, base);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Store a freshly parsed index.theme (or its absence: info == NULL). */
static int theme_store(struct scanner *s, long long tid, const char *path,
		       const struct stat *st, const struct theme_info *info)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *up = NULL;
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *sub = NULL;
	g_autofree char *inherits = NULL;
	int r;

	r = db_prepare(s->db,
		       "UPDATE theme SET index_path = ?2, index_ino = ?3, "
		       "index_mtime_ns = ?4, index_size = ?5, "
		       "display_name = ?6, comment = ?7, example = ?8, "
		       "inherits = ?9, hidden = ?10, valid = ?11 WHERE id = ?1",
		       &up);
	if (r < 0)
		return r;
	sqlite3_bind_int64(up, 1, tid);
	if (path) {
		sqlite3_bind_text(up, 2, path, -1, SQLITE_STATIC);
		sqlite3_bind_int64(up, 3, (long long)st->st_ino);
		sqlite3_bind_int64(up, 4, timespec_ns(st->st_mtim));
		sqlite3_bind_int64(up, 5, (long long)st->st_size);
	} else {
		sqlite3_bind_null(up, 2);
		for (int i = 3; i <= 5; i++)
			sqlite3_bind_int64(up, i, -1);
	}
	if (info) {
		inherits = g_strjoinv(",", info->inherits);
		sqlite3_bind_text(up, 6, info->name, -1, SQLITE_STATIC);
		sqlite3_bind_text(up, 7, info->comment, -1, SQLITE_STATIC);
		sqlite3_bind_text(up, 8, info->example, -1, SQLITE_STATIC);
		sqlite3_bind_text(up, 9, inherits, -1, SQLITE_STATIC);
		sqlite3_bind_int(up, 10, info->hidden);
	} else {
		sqlite3_bind_text(up, 9, "", -1, SQLITE_STATIC);
		sqlite3_bind_int(up, 10, 0);
	}
	sqlite3_bind_int(up, 11, info != NULL);
	r = step_done(s, up);
	if (r < 0)
		return r;

	r = exec_bind(s, "DELETE FROM subdir WHERE theme_id = ?1", tid, 0);
	if (r < 0)
		return r;
	changed_theme(s);
	if (!info)
		return 0;

	r = db_prepare(s->db,
		       "INSERT INTO subdir(theme_id, pos, path, size, scale, "
		       "type, min_size, max_size, threshold) "
		       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
		       &sub);
	if (r < 0)
		return r;
	for (size_t i = 0; i < info->n_subdirs; i++) {
		const struct theme_subdir *sd = &info->subdirs[i];

		sqlite3_bind_int64(sub, 1, tid);
		sqlite3_bind_int64(sub, 2, (long long)i);
		sqlite3_bind_text(sub, 3, sd->path, -1, SQLITE_STATIC);
		sqlite3_bind_int(sub, 4, sd->size);
		sqlite3_bind_int(sub, 5, sd->scale);
		sqlite3_bind_int(sub, 6, sd->type);
		sqlite3_bind_int(sub, 7, sd->min_size);
		sqlite3_bind_int(sub, 8, sd->max_size);
		sqlite3_bind_int(sub, 9, sd->threshold);
		r = step_done(s, sub);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Pick the first index.theme in base-dir order and reparse it when its
 * stamp differs from the stored one. */
static int theme_refresh_index(struct scanner *s, long long tid,
			       GPtrArray *roots)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	_cleanup_(theme_info_freep) struct theme_info *info = NULL;
	g_autofree char *found = NULL;
	struct stat st = { 0 };
	int r;

	for (guint i = 0; i < roots->len && !found; i++) {
		g_autofree char *p =
			g_build_filename(roots->pdata[i], "index.theme", NULL);
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode))
			found = TAKE_PTR(p);
	}

	r = db_prepare(s->db,
		       "SELECT index_path, index_ino, index_mtime_ns, "
		       "index_size FROM theme WHERE id = ?1",
		       &q);
	if (r < 0)
		return r;
	sqlite3_bind_int64(q, 1, tid);
	if (sqlite3_step(q) != SQLITE_ROW)
		return -EIO;
	if (!found) {
		if (sqlite3_column_type(q, 0) == SQLITE_NULL)
			return 0;
		return theme_store(s, tid, NULL, NULL, NULL);
	}
	if (streq(db_column_str(q, 0), found) &&
	    sqlite3_column_int64(q, 1) == (long long)st.st_ino &&
	    sqlite3_column_int64(q, 2) == timespec_ns(st.st_mtim) &&
	    sqlite3_column_int64(q, 3) == (long long)st.st_size)
		return 0;

	if (theme_info_load(found, &info) < 0) {
		s->stats.problems++;
		/* Remember the stamp so a broken file is not reparsed (and
		 * logged) on every refresh; the theme has no directories. */
		return theme_store(s, tid, found, &st, NULL);
	}
	return theme_store(s, tid, found, &st, info);
}

static int theme_refresh(struct scanner *s, long long tid)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *roots = NULL;
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *subs = NULL;
	g_autoptr(GPtrArray) root_paths =
		g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GArray) root_bases =
		g_array_new(FALSE, FALSE, sizeof(long long));
	int r;

	r = db_prepare(s->db,
		       "SELECT d.path, d.basedir_id FROM dir d "
		       "JOIN basedir b ON b.id = d.basedir_id "
		       "WHERE d.theme_id = ?1 AND d.kind = ?2 ORDER BY b.pos",
		       &roots);
	if (r < 0)
		return r;
	sqlite3_bind_int64(roots, 1, tid);
	sqlite3_bind_int(roots, 2, DIR_KIND_ROOT);
	while (sqlite3_step(roots) == SQLITE_ROW) {
		long long b = sqlite3_column_int64(roots, 1);
		g_ptr_array_add(root_paths, g_strdup(db_column_str(roots, 0)));
		g_array_append_val(root_bases, b);
	}

	r = theme_refresh_index(s, tid, root_paths);
	if (r < 0)
		return r;

	/* Subdirectories no longer listed go away; listed ones are stamped. */
	r = exec_bind(s,
		      "DELETE FROM dir WHERE theme_id = ?1 AND kind = ?2 AND "
		      "relpath NOT IN (SELECT path FROM subdir "
		      "WHERE theme_id = ?1)",
		      tid, DIR_KIND_SUBDIR);
	if (r < 0)
		return r;
	if (sqlite3_changes(s->db) > 0)
		changed_theme(s);

	r = db_prepare(s->db, "SELECT path FROM subdir WHERE theme_id = ?1",
		       &subs);
	if (r < 0)
		return r;
	sqlite3_bind_int64(subs, 1, tid);
	while (sqlite3_step(subs) == SQLITE_ROW) {
		const char *rel = db_column_str(subs, 0);

		for (guint i = 0; i < root_paths->len; i++) {
			g_autofree char *path = g_build_filename(
				root_paths->pdata[i], rel, NULL);
			struct stamp old;
			long long id;

			id = dir_row(s, path,
				     g_array_index(root_bases, long long, i),
				     tid, DIR_KIND_SUBDIR, rel, &old);
			if (id < 0)
				return -EIO;
			r = dir_refresh(s, id, old, path);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static int themes_refresh(struct scanner *s)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(long long));
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	int r;

	r = exec_bind(s,
		      "DELETE FROM theme WHERE id NOT IN "
		      "(SELECT theme_id FROM dir WHERE kind = ?1)",
		      DIR_KIND_ROOT, 0);
	if (r < 0)
		return r;
	r = db_prepare(s->db, "SELECT id, name FROM theme ORDER BY name", &q);
	if (r < 0)
		return r;
	while (sqlite3_step(q) == SQLITE_ROW) {
		long long id = sqlite3_column_int64(q, 0);
		g_array_append_val(ids, id);
		g_ptr_array_add(names, g_strdup(db_column_str(q, 1)));
	}
	for (guint i = 0; i < ids->len; i++) {
		if (s->flags & SCAN_PROGRESS)
			fprintf(stderr, "\r\033[Kindexing [%u/%u] %s", i + 1,
				ids->len, (char *)names->pdata[i]);
		r = theme_refresh(s, g_array_index(ids, long long, i));
		if (r < 0)
			return r;
	}
	if (s->flags & SCAN_PROGRESS)
		fprintf(stderr, "\r\033[K");
	return 0;
}

#define SCANNER_STATEMENTS(s)                                                  \
	{                                                                      \
		{ &(s)->dir_get,                                               \
		  "SELECT id, ino, mtime_ns, ctime_ns FROM dir "               \
		  "WHERE path = ?1" },                                         \
			{ &(s)->dir_insert, "INSERT INTO dir(basedir_id, "     \
					    "theme_id, kind, relpath, path) "  \
					    "VALUES (?1, ?2, ?3, ?4, ?5)" },   \
			{ &(s)->dir_set_stamp,                                 \
			  "UPDATE dir SET ino = ?1, mtime_ns = ?2, "           \
			  "ctime_ns = ?3 WHERE id = ?4" },                     \
			{ &(s)->dir_set_listing,                               \
			  "UPDATE dir SET listing_id = ?1 WHERE id = ?2" },    \
			{ &(s)->listing_get,                                   \
			  "SELECT id, mtime_ns, ctime_ns FROM "                \
			  "listing WHERE dev = ?1 AND ino = ?2" },             \
			{ &(s)->listing_put,                                   \
			  "INSERT INTO listing(dev, ino, mtime_ns, ctime_ns) " \
			  "VALUES (?1, ?2, ?3, ?4) ON CONFLICT(dev, ino) DO "  \
			  "UPDATE "                                            \
			  "SET mtime_ns = excluded.mtime_ns, "                 \
			  "ctime_ns = excluded.ctime_ns RETURNING id" },       \
			{ &(s)->listing_names,                                 \
			  "SELECT name FROM icon WHERE listing_id = ?1" },     \
			{ &(s)->icon_clear,                                    \
			  "DELETE FROM icon WHERE listing_id = ?1" },          \
			{ &(s)->icon_insert,                                   \
			  "INSERT OR IGNORE INTO icon(name, "                  \
			  "listing_id, ext) VALUES (?1, ?2, ?3)" },            \
	}

static void scanner_done(struct scanner *s)
{
	const struct db_statement stmts[] = SCANNER_STATEMENTS(s);

	db_finalize_all(stmts, ELEMENTSOF(stmts));
	g_hash_table_destroy(s->listings_read);
	basedirs_real_free(s->real);
}

static int scanner_init(struct scanner *s)
{
	const struct db_statement stmts[] = SCANNER_STATEMENTS(s);

	s->n_bases = g_strv_length((char **)s->basedirs);
	s->real = basedirs_real_new(s->basedirs);
	s->listings_read = g_hash_table_new_full(g_int64_hash, g_int64_equal,
						 g_free, NULL);
	return db_prepare_all(s->db, stmts, ELEMENTSOF(stmts));
}

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int scan_refresh(sqlite3 *db, char *const *basedirs, unsigned flags,
		 struct scan_stats *ret_stats, struct scan_changes *changes)
{
	struct scanner s = { .db = db,
			     .basedirs = basedirs,
			     .flags = flags,
			     .changes = changes };
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	double start = now_seconds();
	int r;

	r = db_exec(db, "BEGIN IMMEDIATE");
	if (r < 0)
		return db_log_errno(db, r, "cannot start index transaction");

	r = scanner_init(&s);
	if (r >= 0)
		r = bases_sync(&s);
	if (r >= 0)
		r = bases_refresh(&s);
	if (r >= 0)
		r = themes_refresh(&s);
	if (r >= 0 && s.stats.changed)
		r = db_exec(db, "DELETE FROM listing WHERE id NOT IN "
				"(SELECT listing_id FROM dir "
				"WHERE listing_id IS NOT NULL)");
	if (r >= 0 && s.stats.changed)
		r = db_meta_set_int(db, "refreshed", (long long)time(NULL));
	scanner_done(&s);
	if (r < 0) {
		(void)db_exec(db, "ROLLBACK");
		return r;
	}
	r = db_exec(db, "COMMIT");
	if (r < 0)
		return db_log_errno(db, r, "cannot commit index");

	if ((flags & SCAN_COUNT) &&
	    db_prepare(db,
		       "SELECT (SELECT count(*) FROM theme WHERE valid), "
		       "(SELECT count(*) FROM icon)",
		       &q) >= 0 &&
	    sqlite3_step(q) == SQLITE_ROW) {
		s.stats.themes = sqlite3_column_int(q, 0);
		s.stats.icons = sqlite3_column_int64(q, 1);
	}
	s.stats.seconds = now_seconds() - start;
	if (ret_stats)
		*ret_stats = s.stats;
	return 0;
}
