/* The index for its users; see index.h. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "db.h"
#include "index.h"
#include "log.h"
#include "layered.h"

int index_prepare(const char *path, const char *layer, char *const *basedirs,
		  unsigned flags, struct index_pending *ret)
{
	_cleanup_(sqlite3_closep) sqlite3 *db = NULL;
	g_autofree char *copy_from = NULL;
	int r;

	r = db_open(path, flags & INDEX_CHECK ? DB_CHECK : 0, &db);
	if (r < 0)
		return r;
	r = layered_open(db, layer, flags & INDEX_NOT_LAYERED, basedirs,
			 &copy_from);
	if (r < 0)
		return r;
	*ret = (struct index_pending){ .db = TAKE_PTR(db),
				       .copy_from = TAKE_PTR(copy_from) };
	return 0;
}

int index_refresh(struct index_pending *p, char *const *basedirs,
		  unsigned flags, const struct scan_watcher *watcher,
		  struct scan_stats *ret_stats)
{
	bool progress = flags & INDEX_PROGRESS;
	struct scan_stats st;
	int r;

	if (p->copy_from) {
		r = layered_copy(p->db, p->copy_from);
		g_clear_pointer(&p->copy_from, g_free);
		if (r < 0)
			return r;
		p->restarted = r > 0;
	}
	r = scan_refresh(
		p->db, basedirs,
		(progress ? SCAN_COUNT : 0) |
			(progress && isatty(STDERR_FILENO) ? SCAN_PROGRESS : 0),
		watcher, &st, NULL);
	if (r < 0)
		return r;
	(void)layered_settled(p->db, p->restarted, st.dirs_read);
	p->restarted = false;
	if (ret_stats)
		*ret_stats = st;
	return 0;
}

int index_open(const char *path, const char *layer, char *const *basedirs,
	       unsigned flags, const struct scan_watcher *watcher,
	       sqlite3 **ret_db, struct scan_stats *ret_stats)
{
	_cleanup_(index_pending_done) struct index_pending p = { 0 };
	int r;

	r = index_prepare(path, layer, basedirs, flags, &p);
	if (r >= 0)
		r = index_refresh(&p, basedirs, flags, watcher, ret_stats);
	if (r < 0)
		return r;
	*ret_db = TAKE_PTR(p.db);
	return 0;
}

/* Whether `theme` is a valid theme of the index in `schema`. */
static bool theme_valid_in(sqlite3 *db, const char *schema, const char *theme)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	g_autofree char *sql = g_strdup_printf(
		"SELECT 1 FROM %s.theme WHERE name = ?1 AND valid", schema);

	return db_query_row(db, &q, sql, "t", theme) == 0;
}

bool index_pending_theme_valid(const struct index_pending *p,
			       const char *theme)
{
	return theme_valid_in(p->db, p->copy_from ? "machine" : "main", theme);
}

void index_pending_done(struct index_pending *p)
{
	sqlite3_closep(&p->db);
	g_clear_pointer(&p->copy_from, g_free);
}

int index_connect(const char *path, unsigned flags, int busy_ms, sqlite3 **ret)
{
	_cleanup_(sqlite3_closep) sqlite3 *db = NULL;
	int r;

	r = db_connect(path, flags, busy_ms, &db);
	if (r < 0)
		return r;
	/* without the machine's index, the user's own icons still serve */
	(void)layered_attach(db);
	*ret = TAKE_PTR(db);
	return 0;
}

static long long count_of(sqlite3 *db, const char *sql)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;

	if (db_prepare(db, sql, &q) < 0 || sqlite3_step(q) != SQLITE_ROW)
		return -1;
	return sqlite3_column_int64(q, 0);
}

int index_stats(sqlite3 *db, struct index_stats *ret)
{
	g_autofree char *icons_sql = layered_icons_sql(
		db, "SELECT count(*) AS n FROM {icon}",
		"SELECT sum(n) FROM ({arms})");

	*ret = (struct index_stats){
		.themes =
			count_of(db, "SELECT count(*) FROM theme WHERE valid"),
		.dirs = count_of(db, "SELECT count(*) FROM dir"),
		.icons = count_of(db, icons_sql),
		.refreshed = db_meta_get_int(db, "refreshed", 0),
	};
	return ret->themes < 0 || ret->dirs < 0 || ret->icons < 0 ? -EIO : 0;
}

/* The first column of every row of `q`, as strings. */
static int column_strings(sqlite3 *db, sqlite3_stmt *q, GPtrArray **ret)
{
	g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func(g_free);
	int rc;

	while ((rc = sqlite3_step(q)) == SQLITE_ROW)
		g_ptr_array_add(out, g_strdup(db_column_str(q, 0)));
	if (rc != SQLITE_DONE)
		return db_log_error(db, rc, "cannot read the index");
	*ret = g_steal_pointer(&out);
	return 0;
}

int index_all_names(sqlite3 *db, GHashTable *names)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	g_autoptr(GPtrArray) all = NULL;
	g_autofree char *sql = layered_icons_sql(
		db,
		"SELECT name FROM {icon} WHERE listing_id IN "
		"(SELECT listing_id FROM dir)",
		"SELECT name FROM ({arms}) UNION "
		"SELECT name FROM theme WHERE valid");
	int r;

	r = db_query(db, &q, sql, "");
	if (r >= 0)
		r = column_strings(db, q, &all);
	for (guint i = 0; r >= 0 && i < all->len; i++)
		g_hash_table_add(names, g_strdup(all->pdata[i]));
	return r;
}

int index_icon_file(sqlite3 *db, const char *path)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	g_autofree char *dir = g_path_get_dirname(path);
	g_autofree char *base = g_path_get_basename(path);
	g_autofree char *sql = layered_icons_sql(
		db,
		"SELECT i.ext FROM dir d JOIN {icon} i ON i.listing_id = "
		"d.listing_id WHERE d.path = ?1 AND i.name = ?2 AND i.ext = ?3",
		NULL);
	char *dot = strrchr(base, '.');
	int ext = dot ? icon_ext_from_name(dot + 1) : -1, r;

	if (ext < 0 || !g_path_is_absolute(path))
		return -ENOENT;
	*dot = '\0';
	r = db_query_row(db, &q, sql, "tti", dir, base, ext);
	return r < 0 ? r : ext;
}

bool index_theme_valid(sqlite3 *db, const char *theme)
{
	return theme_valid_in(db, "main", theme);
}
