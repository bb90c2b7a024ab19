/* Lists of what a theme's search chain holds; see lookup-chain.h. */
#include <glib.h>

#include "db.h"
#include "layered.h"
#include "lookup-chain.h"
#include "rows.h"
#include "theme.h"

/* "?,?,?" placeholders are not worth it: chains are short, so the ids go
 * into the query as a JSON array. */
static char *chain_json(const long long *ids, unsigned n)
{
	GString *s = g_string_new("[");

	for (unsigned i = 0; i < n; i++)
		g_string_append_printf(s, "%s%lld", i ? "," : "", ids[i]);
	g_string_append_c(s, ']');
	return g_string_free(s, FALSE);
}

/* Prepare `sql` with ?1 bound to the search chain of `theme` (the JSON
 * array, which *ret_json keeps alive) and ?2 to `arg`. */
static int chain_query(struct lookup *l, const char *theme, const char *sql,
		       int arg, char **ret_json, sqlite3_stmt **ret)
{
	const long long *ids;
	unsigned n;
	int r;

	r = lookup_chain(l, theme, &ids, &n);
	if (r < 0)
		return r;
	*ret_json = chain_json(ids, n);
	return db_query(lookup_db(l), ret, sql, "ti", *ret_json, arg);
}

/* The first column of each row of `q`, as new strings (g_ptr_array_unref
 * frees all); an error reading is logged as `what`. */
static int column_strings(struct lookup *l, sqlite3_stmt *q, const char *what,
			  GPtrArray **ret)
{
	GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
	int rc;

	while ((rc = sqlite3_step(q)) == SQLITE_ROW)
		g_ptr_array_add(out, g_strdup(db_column_str(q, 0)));
	if (rc != SQLITE_DONE) {
		g_ptr_array_unref(out);
		return db_log_error(lookup_db(l), rc, what);
	}
	*ret = out;
	return 0;
}

/* The names of the chain of `theme` and of the unthemed fallbacks whose
 * extension `ext_op` admits ("IS NOT NULL" for all, "!= 1" for bitmaps). */
static int chain_names(struct lookup *l, const char *theme, const char *ext_op,
		       GPtrArray **ret)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	g_autofree char *json = NULL;
	g_autofree char *arm = g_strdup_printf(
		"SELECT name FROM {icon} WHERE ext %s AND listing_id IN "
		"(SELECT listing_id FROM dir WHERE listing_id NOT NULL "
		"AND ((kind = ?2 AND theme_id IN "
		"(SELECT value FROM json_each(?1))) OR kind = ?3))",
		ext_op);
	g_autofree char *sql = layered_icons_sql(
		lookup_db(l), arm,
		"SELECT DISTINCT name FROM ({arms}) ORDER BY name");
	int r;

	r = chain_query(l, theme, sql, DIR_KIND_SUBDIR, &json, &q);
	if (r < 0)
		return r;
	sqlite3_bind_int(q, 3, DIR_KIND_BASE);
	return column_strings(l, q, "cannot list icons", ret);
}

int lookup_names(struct lookup *l, const char *theme, GPtrArray **ret)
{
	return chain_names(l, theme, "IS NOT NULL", ret);
}

int lookup_bitmap_names(struct lookup *l, const char *theme, GPtrArray **ret)
{
	G_STATIC_ASSERT(ICON_EXT_SVG == 1);
	return chain_names(l, theme, "!= 1", ret);
}

/* The sizes `sql` selects of the chain's directories (?2: `arg`). */
static int chain_sizes(struct lookup *l, const char *theme, const char *sql,
		       int arg, GArray **ret)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	g_autofree char *json = NULL;
	GArray *sizes;
	int r;

	r = chain_query(l, theme, sql, arg, &json, &q);
	if (r < 0)
		return r;
	sizes = g_array_new(FALSE, FALSE, sizeof(int));
	while (sqlite3_step(q) == SQLITE_ROW) {
		int s = sqlite3_column_int(q, 0);
		g_array_append_val(sizes, s);
	}
	*ret = sizes;
	return 0;
}

int lookup_chain_sizes(struct lookup *l, const char *theme, int max,
		       GArray **ret)
{
	return chain_sizes(l, theme,
			   "SELECT DISTINCT size FROM subdir WHERE theme_id IN "
			   "(SELECT value FROM json_each(?1)) AND type != 1 "
			   "AND size <= ?2 ORDER BY size",
			   max, ret);
}

int lookup_chain_scaled_sizes(struct lookup *l, const char *theme,
			      GArray **ret)
{
	g_autofree char *sql = layered_icons_sql(
		lookup_db(l),
		"SELECT s.size AS size FROM json_each(?1) j "
		"JOIN dir d ON d.theme_id = j.value AND d.kind = ?2 "
		"JOIN subdir s ON s.theme_id = d.theme_id AND s.path = d.relpath "
		"AND s.scale = 2 WHERE EXISTS (SELECT 1 FROM {icon} i "
		"WHERE i.listing_id = d.listing_id)",
		"SELECT DISTINCT size FROM ({arms}) ORDER BY size");

	return chain_sizes(l, theme, sql, DIR_KIND_SUBDIR, ret);
}

int lookup_name_sizes(struct lookup *l, const char *theme, GHashTable **ret)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	g_autofree char *json = NULL;
	g_autoptr(GHashTable) out = g_hash_table_new_full(
		g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_array_unref);
	/* name (out's key) → 1 + the chain position its sizes are of */
	g_autoptr(GHashTable) from = g_hash_table_new(g_str_hash, g_str_equal);
	/* in no order: ordered, SQLite sorted every (name, directory) pair
	 * of the chain in memory (18 MB for Papirus) */
	g_autofree char *sql = layered_icons_sql(
		lookup_db(l),
		"SELECT i.name, j.key, s.type, s.size, s.scale FROM json_each(?1) j "
		"JOIN dir d ON d.theme_id = j.value AND d.kind = ?2 "
		"JOIN subdir s ON s.theme_id = d.theme_id AND s.path = d.relpath "
		"JOIN {icon} i ON i.listing_id = d.listing_id",
		NULL);
	int r, rc;

	r = chain_query(l, theme, sql, DIR_KIND_SUBDIR, &json, &q);
	if (r < 0)
		return r;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		const char *name = db_column_str(q, 0);
		gintptr pos = (gintptr)sqlite3_column_int64(q, 1) + 1;
		struct lookup_size size = {
			sqlite3_column_int(q, 3), sqlite3_column_int(q, 4),
			sqlite3_column_int(q, 2) == THEME_DIR_SCALABLE
		};
		char *key = NULL;
		GArray *sizes = NULL;
		gintptr had;

		if (g_hash_table_lookup_extended(out, name, (void **)&key,
						 (void **)&sizes)) {
			had = GPOINTER_TO_INT(g_hash_table_lookup(from, key));
			if (pos > had)
				continue; /* a later theme of the chain */
			if (pos < had)
				g_array_set_size(sizes, 0);
		} else {
			key = g_strdup(name);
			sizes = g_array_new(FALSE, FALSE, sizeof(size));
			g_hash_table_insert(out, key, sizes);
		}
		g_hash_table_insert(from, key, GINT_TO_POINTER(pos));
		if (!size.scalable || size.scale == 2)
			g_array_append_val(sizes, size);
	}
	if (rc != SQLITE_DONE)
		return db_log_error(lookup_db(l), rc, "cannot read the sizes of icons");
	*ret = g_steal_pointer(&out);
	return 0;
}

int lookup_symbolic_pngs(struct lookup *l, const char *theme, GPtrArray **ret)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	g_autofree char *json = NULL;
	GPtrArray *out;
	g_autofree char *sql = layered_icons_sql(
		lookup_db(l),
		"SELECT s.size * s.scale AS px, i.name AS name FROM dir d "
		"JOIN subdir s ON s.theme_id = d.theme_id AND s.path = d.relpath "
		"JOIN {icon} i ON i.listing_id = d.listing_id "
		"WHERE d.theme_id IN (SELECT value FROM json_each(?1)) "
		"AND d.kind = 2 AND s.type = 0 AND i.ext = ?2 "
		"AND substr(i.name, -9) = '.symbolic'",
		"SELECT DISTINCT px, name FROM ({arms}) ORDER BY px, name");
	int r, rc;

	r = chain_query(l, theme, sql, ICON_EXT_PNG, &json, &q);
	if (r < 0)
		return r;
	out = g_ptr_array_new_with_free_func(g_free);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW)
		g_ptr_array_add(out, g_strdup_printf("%d %s", sqlite3_column_int(q, 0),
						     db_column_str(q, 1)));
	if (rc != SQLITE_DONE) {
		g_ptr_array_unref(out);
		return db_log_error(lookup_db(l), rc, "cannot read symbolic icons");
	}
	*ret = out;
	return 0;
}

int lookup_symbolic_variants(struct lookup *l, const char *theme,
			     GPtrArray **ret)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	g_autofree char *json = NULL;
	/* a name's directories of one theme may be on both sides */
	g_autofree char *sql = layered_icons_sql(
		lookup_db(l),
		"SELECT i.name AS name, d.theme_id AS theme_id, s.size || '/' "
		"|| s.scale || '/' || s.type || '/' || s.min_size || '/' || "
		"s.max_size || '/' || s.threshold AS shape FROM dir d "
		"JOIN subdir s ON s.theme_id = d.theme_id AND s.path = d.relpath "
		"JOIN {icon} i ON i.listing_id = d.listing_id "
		"WHERE d.theme_id IN (SELECT value FROM json_each(?1)) "
		"AND d.kind = 2 AND i.ext = ?2 AND (i.name LIKE '%-symbolic' "
		"OR i.name LIKE '%-symbolic-ltr' OR i.name LIKE '%-symbolic-rtl')",
		"SELECT DISTINCT name FROM (SELECT name FROM ({arms}) "
		"GROUP BY name, theme_id HAVING count(DISTINCT shape) > 1) "
		"ORDER BY name");
	int r;

	r = chain_query(l, theme, sql, ICON_EXT_SVG, &json, &q);
	if (r < 0)
		return r;
	return column_strings(l, q, "cannot read symbolic icons", ret);
}
