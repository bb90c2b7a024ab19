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
#include "layered.h"
#include "rows.h"
#include "log.h"
#include "scan.h"
#include "scanner.h"
#include "theme.h"
#include "time-util.h"

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
	r = db_query(s->db, &roots,
		     "SELECT id, path, theme_id FROM dir "
		     "WHERE basedir_id = ?1 AND kind = ?2",
		     "Ii", base_id, DIR_KIND_ROOT);
	if (r < 0)
		return r;
	while (sqlite3_step(roots) == SQLITE_ROW) {
		if (g_hash_table_contains(present, db_column_str(roots, 1)))
			continue;
		r = exec_bind(s,
			      "DELETE FROM dir WHERE basedir_id = ?1 AND "
			      "theme_id = ?2",
			      base_id, sqlite3_column_int64(roots, 2));
		if (r < 0)
			return r;
		dirs_forget(s);
		changed_theme(s);
	}
	return 0;
}

/* Whether the index holds exactly these base directories, in this order
 * (then bases_sync has nothing to write: SQLite writes every page a
 * statement touched, even when it ends as it was). */
static bool bases_unchanged(struct scanner *s)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	size_t i = 0;

	if (db_prepare(s->db, "SELECT path, pos FROM basedir ORDER BY pos",
		       &q) < 0)
		return false;
	for (; sqlite3_step(q) == SQLITE_ROW; i++)
		if (i >= s->n_bases ||
		    sqlite3_column_int64(q, 1) != (long long)i ||
		    !streq(db_column_str(q, 0), s->basedirs[i]))
			return false;
	return i == s->n_bases;
}

static int bases_sync(struct scanner *s)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *up = NULL;
	int r;

	if (bases_unchanged(s))
		return 0;
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
	if (sqlite3_changes(s->db) > 0) {
		dirs_forget(s);
		changed_theme(s);
	}
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

		r = db_query_row(s->db, &q,
				 "SELECT id FROM basedir WHERE path = ?1", "t",
				 base);
		if (r < 0)
			return r == -ENOENT ? -EIO : r;
		base_id = sqlite3_column_int64(q, 0);

		dir_id = dir_row(s, base, base_id, -1, DIR_KIND_BASE, "", &old);
		if (dir_id < 0)
			return -EIO;
		scan_watch(s, base, true);
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

	r = db_query(s->db, &up,
		     "UPDATE theme SET index_path = ?2, index_ino = ?3, "
		     "index_mtime_ns = ?4, index_size = ?5, "
		     "display_name = ?6, comment = ?7, example = ?8, "
		     "inherits = ?9, hidden = ?10, valid = ?11, kde_keys = ?12 "
		     "WHERE id = ?1",
		     "I", tid);
	if (r < 0)
		return r;
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
		sqlite3_bind_text(up, 12, info->kde_keys, -1, SQLITE_STATIC);
	} else {
		sqlite3_bind_text(up, 12, "", -1, SQLITE_STATIC);
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
		       "type, min_size, max_size, threshold, context) "
		       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
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
		sqlite3_bind_text(sub, 10, sd->context ? sd->context : "", -1,
				  SQLITE_STATIC);
		r = step_done(s, sub);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Pick the first index.theme in base-dir order and reparse it when its
 * stamp differs from the stored one: 1 when it did (the theme's
 * subdirectories may have changed), 0 when nothing changed. */
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
			found = g_steal_pointer(&p);
	}

	r = db_query_row(s->db, &q,
			 "SELECT index_path, index_ino, index_mtime_ns, "
			 "index_size FROM theme WHERE id = ?1",
			 "I", tid);
	if (r < 0)
		return r == -ENOENT ? -EIO : r;
	if (!found) {
		if (sqlite3_column_type(q, 0) == SQLITE_NULL)
			return 0;
		r = theme_store(s, tid, NULL, NULL, NULL);
		return r < 0 ? r : 1;
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
		r = theme_store(s, tid, found, &st, NULL);
	} else
		r = theme_store(s, tid, found, &st, info);
	return r < 0 ? r : 1;
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

	r = db_query(s->db, &roots,
		     "SELECT d.path, d.basedir_id FROM dir d "
		     "JOIN basedir b ON b.id = d.basedir_id "
		     "WHERE d.theme_id = ?1 AND d.kind = ?2 ORDER BY b.pos",
		     "Ii", tid, DIR_KIND_ROOT);
	if (r < 0)
		return r;
	while (sqlite3_step(roots) == SQLITE_ROW) {
		long long b = sqlite3_column_int64(roots, 1);
		g_ptr_array_add(root_paths, g_strdup(db_column_str(roots, 0)));
		g_array_append_val(root_bases, b);
		scan_watch(s, root_paths->pdata[root_paths->len - 1], false);
	}

	r = theme_refresh_index(s, tid, root_paths);
	if (r < 0)
		return r;

	/* Subdirectories no longer listed go away (only a new index.theme
	 * lists others); listed ones are stamped. */
	if (r > 0) {
		r = exec_bind(s,
			      "DELETE FROM dir WHERE theme_id = ?1 AND kind = ?2 "
			      "AND relpath NOT IN (SELECT path FROM subdir "
			      "WHERE theme_id = ?1)",
			      tid, DIR_KIND_SUBDIR);
		if (r < 0)
			return r;
		if (sqlite3_changes(s->db) > 0) {
			dirs_forget(s);
			changed_theme(s);
		}
	}

	r = db_query(s->db, &subs,
		     "SELECT path FROM subdir WHERE theme_id = ?1", "I", tid);
	if (r < 0)
		return r;
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
			scan_watch(s, path, false);
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
	if (sqlite3_changes(s->db) > 0)
		dirs_forget(s); /* their dirs went with them */
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
			  "ctime_ns = excluded.ctime_ns, below = 0 "           \
			  "RETURNING id" },                                    \
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
	sqlite3_finalize(s->listing_names);
	g_hash_table_destroy(s->listings_read);
	if (s->dirs_known)
		g_hash_table_destroy(s->dirs_known);
	if (s->dirs_paths)
		g_string_chunk_free(s->dirs_paths);
	basedirs_real_free(s->real);
}

static int scanner_init(struct scanner *s)
{
	const struct db_statement stmts[] = SCANNER_STATEMENTS(s);
	g_autofree char *names = layered_icons_sql(
		s->db, "SELECT name FROM {icon} WHERE listing_id = ?1", NULL);
	int r;

	s->n_bases = g_strv_length((char **)s->basedirs);
	s->real = basedirs_real_new(s->basedirs);
	s->listings_read = g_hash_table_new_full(g_int64_hash, g_int64_equal,
						 g_free, NULL);
	r = db_prepare_all(s->db, stmts, ELEMENTSOF(stmts));
	if (r >= 0)
		r = db_prepare(s->db, names, &s->listing_names);
	return r < 0 ? r : dirs_load(s);
}

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int scan_refresh(sqlite3 *db, char *const *basedirs, unsigned flags,
		 const struct scan_watcher *watcher,
		 struct scan_stats *ret_stats, struct scan_changes *changes)
{
	struct scanner s = { .db = db,
			     .basedirs = basedirs,
			     .flags = flags,
			     .changes = changes,
			     .watcher = watcher };
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	g_autofree char *count = NULL;
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
	/* what was derived from the index (synthesized files) is dated */
	if (r >= 0 && s.stats.changed)
		r = db_meta_set_int(db, "generation",
				    db_meta_get_int(db, "generation", 0) + 1);
	scanner_done(&s);
	if (r < 0) {
		(void)db_exec(db, "ROLLBACK");
		return r;
	}
	r = db_exec(db, "COMMIT");
	if (r < 0)
		return db_log_errno(db, r, "cannot commit index");
	/* a first build writes its whole size into the log */
	db_wal_trim(db, 0);

	count = layered_icons_sql(db, "SELECT count(*) AS n FROM {icon}",
				  "SELECT (SELECT count(*) FROM theme "
				  "WHERE valid), (SELECT sum(n) FROM ({arms}))");
	if ((flags & SCAN_COUNT) && db_prepare(db, count, &q) >= 0 &&
	    sqlite3_step(q) == SQLITE_ROW) {
		s.stats.themes = sqlite3_column_int(q, 0);
		s.stats.icons = sqlite3_column_int64(q, 1);
	}
	s.stats.seconds = now_seconds() - start;
	if (ret_stats)
		*ret_stats = s.stats;
	return 0;
}
