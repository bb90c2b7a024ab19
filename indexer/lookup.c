/* The specification's lookup over the index; see lookup.h. */
#include <errno.h>
#include <glib.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

#include "db.h"
#include "log.h"
#include "lookup.h"
#include "index.h"
#include "layered.h"
#include "pick.h"
#include "theme.h"

/* Deeper Inherits chains than this are cut: real ones have 2 or 3. */
#define CHAIN_MAX 64
/* The icon rows of this many names are kept, the names looked up last:
 * Qt asks for one name in every directory the cache lists it in, a
 * lookup each. */
#define NAMES_KEPT 32

struct lookup {
	sqlite3 *db;
	enum lookup_rules rules;
	sqlite3_stmt *theme_get; /* name → id, inherits */
	sqlite3_stmt *name_rows;
	sqlite3_stmt *icon_fallback;
	sqlite3_stmt *subdirs_get;
	sqlite3_stmt *dirs_get;
	sqlite3_stmt *bases_get;
	GHashTable *chains; /* theme name → GArray of theme ids */
	/* Cached like the chains: theme id → struct theme_dirs, and basedir
	 * id → its position. */
	GHashTable *themes;
	GHashTable *base_pos;
	/* name → GArray of its icon rows (struct name_row), of the last
	 * names looked up (NAMES_KEPT) */
	GHashTable *names;
	/* one theme's candidates (struct pick_candidate), kept for the next
	 * lookup's (emptied after each) */
	GArray *cands;
};

/* A theme's directories as its candidates need them (theme_load): its
 * subdirectories by relative path, and its directories by the listing
 * they are. A listing's icon rows are then found by name alone, one range
 * of the icon table, instead of a search of the directories per row. */
struct theme_dirs {
	GHashTable *subdirs; /* relpath → struct pick_dir */
	GArray *dirs;	     /* struct theme_dir */
	GStringChunk *paths; /* theirs */
	/* listing id → 1 + the index in `dirs` of the first directory that
	 * listing is (the next in struct theme_dir): the index's own ids,
	 * and those of the machine's listings below (layered.h) */
	GHashTable *own, *below;
};

struct theme_dir {
	const struct pick_dir *sd;
	const char *path;
	int base_pos;
	int next_own, next_below; /* of the same listing: an index or -1 */
};

/* One of a name's files: its listing, in the index's own ids or (below)
 * the machine's, and its extension. */
struct name_row {
	gint64 listing;
	int ext;
	bool below;
};

/* CROSS JOIN keeps SQLite on the plan that fits: the few rows of one name
 * first, then their directories (not every directory first). It is an arm
 * of layered_icons_sql(). */
#define ICON_FALLBACK_ARM                                                     \
	"SELECT d.path, i.ext, b.pos FROM {icon} i "                          \
	"CROSS JOIN dir d ON d.listing_id = i.listing_id "                    \
	"JOIN basedir b ON b.id = d.basedir_id "                              \
	"WHERE i.name = ?1 AND d.kind = ?2"
#define ICON_FALLBACK_OUTER                                                   \
	"SELECT path, ext FROM ({arms}) ORDER BY pos, ext LIMIT 1"

/* A theme's directories of icons, the listing each is, and the machine's
 * listing below it (%s: layered_listing_below_sql()). */
#define DIRS_GET                                                              \
	"SELECT d.relpath, d.basedir_id, d.path, d.listing_id, %s "           \
	"FROM dir d JOIN main.listing ul ON ul.id = d.listing_id "            \
	"WHERE d.theme_id = ?1 AND d.kind = ?2"

#define LOOKUP_STATEMENTS(l, name_rows_sql, dirs_sql, fallback_sql)           \
	{                                                                     \
		{ &(l)->theme_get, "SELECT id, inherits FROM theme "          \
				   "WHERE name = ?1 AND valid" },             \
			{ &(l)->name_rows, name_rows_sql },                   \
			{ &(l)->subdirs_get,                                  \
			  "SELECT path, pos, size, scale, type, min_size, "   \
			  "max_size, threshold, context FROM subdir "         \
			  "WHERE theme_id = ?1" },                            \
			{ &(l)->dirs_get, dirs_sql },                         \
			{ &(l)->bases_get, "SELECT id, pos FROM basedir" },   \
			{ &(l)->icon_fallback, fallback_sql },                \
	}

static const char *const rules_names[_LOOKUP_RULES_MAX] = {
	[LOOKUP_RULES_GTK] = "gtk",
	[LOOKUP_RULES_KDE] = "kde",
	[LOOKUP_RULES_QT] = "qt",
	[LOOKUP_RULES_SPEC] = "spec",
};

const char *lookup_rules_name(enum lookup_rules rules)
{
	return rules >= 0 && rules < _LOOKUP_RULES_MAX ? rules_names[rules]
						       : NULL;
}

int lookup_rules_from_name(const char *name)
{
	for (int i = 0; i < _LOOKUP_RULES_MAX; i++)
		if (streq(name, rules_names[i]))
			return i;
	return -EINVAL;
}

enum lookup_rules lookup_rules_for_desktop(const char *current_desktop)
{
	g_auto(GStrv) desktops =
		g_strsplit(current_desktop ? current_desktop : "", ":", -1);

	for (char **d = desktops; *d; d++) {
		if (g_ascii_strcasecmp(*d, "KDE") == 0)
			return LOOKUP_RULES_KDE;
		if (g_ascii_strcasecmp(*d, "LXQt") == 0)
			return LOOKUP_RULES_QT;
	}
	return LOOKUP_RULES_GTK;
}

static void theme_dirs_free(struct theme_dirs *td)
{
	g_hash_table_unref(td->subdirs);
	g_hash_table_unref(td->own);
	g_hash_table_unref(td->below);
	g_array_unref(td->dirs);
	g_string_chunk_free(td->paths);
	g_free(td);
}

int lookup_new(sqlite3 *db, enum lookup_rules rules, struct lookup **ret)
{
	struct lookup *l = g_new0(struct lookup, 1);
	g_autofree char *name_rows = layered_name_rows_sql(db);
	g_autofree char *dirs =
		g_strdup_printf(DIRS_GET, layered_listing_below_sql(db));
	g_autofree char *fallback =
		layered_icons_sql(db, ICON_FALLBACK_ARM, ICON_FALLBACK_OUTER);
	const struct db_statement stmts[] =
		LOOKUP_STATEMENTS(l, name_rows, dirs, fallback);
	int r;

	l->db = db;
	l->rules = rules;
	l->chains = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					  (GDestroyNotify)g_array_unref);
	l->themes = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free,
					  (GDestroyNotify)theme_dirs_free);
	l->base_pos = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free,
					    g_free);
	l->names = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					 (GDestroyNotify)g_array_unref);
	l->cands = g_array_new(FALSE, FALSE, sizeof(struct pick_candidate));
	r = db_prepare_all(db, stmts, ELEMENTSOF(stmts));
	if (r < 0) {
		lookup_free(l);
		return r;
	}
	/* bindings stay across resets: the kinds are bound once */
	sqlite3_bind_int(l->dirs_get, 2, DIR_KIND_SUBDIR);
	sqlite3_bind_int(l->icon_fallback, 2, DIR_KIND_BASE);
	*ret = l;
	return 0;
}

struct lookup *lookup_free(struct lookup *l)
{
	if (!l)
		return NULL;
	{
		const struct db_statement stmts[] =
			LOOKUP_STATEMENTS(l, NULL, NULL, NULL);
		db_finalize_all(stmts, ELEMENTSOF(stmts));
	}
	g_hash_table_destroy(l->chains);
	g_hash_table_destroy(l->themes);
	g_hash_table_destroy(l->base_pos);
	g_hash_table_destroy(l->names);
	g_array_unref(l->cands);
	g_free(l);
	return NULL;
}

sqlite3 *lookup_db(struct lookup *l)
{
	return l->db;
}

enum lookup_rules lookup_rules(struct lookup *l)
{
	return l->rules;
}

void lookup_flush(struct lookup *l)
{
	g_hash_table_remove_all(l->chains);
	g_hash_table_remove_all(l->themes);
	g_hash_table_remove_all(l->base_pos);
	g_hash_table_remove_all(l->names);
}

int lookup_name_valid(const char *name)
{
	size_t n = strnlen(name, NAME_MAX + 1);

	return n > 0 && n <= NAME_MAX && !strchr(name, '/') &&
	       !streq(name, ".") && !streq(name, "..");
}

/* Depth-first, in Inherits order, each theme once; a missing theme is skipped, as the
 * specification says, but an error reading the index is an error (a chain
 * cut short by it would resolve other icons, and be cached). */
static int chain_walk(struct lookup *l, const char *name, GArray *ids,
		      GHashTable *seen)
{
	g_auto(GStrv) parents = NULL;
	long long id;
	int rc;

	if (ids->len >= CHAIN_MAX || g_hash_table_contains(seen, name))
		return 0;
	g_hash_table_add(seen, g_strdup(name));

	sqlite3_bind_text(l->theme_get, 1, name, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(l->theme_get);
	if (rc != SQLITE_ROW) {
		(void)sqlite3_reset(l->theme_get);
		return rc == SQLITE_DONE ? 0
					 : db_log_error(l->db, rc, "cannot read theme");
	}
	id = sqlite3_column_int64(l->theme_get, 0);
	parents = theme_split_list(db_column_str(l->theme_get, 1));
	(void)sqlite3_reset(l->theme_get);

	g_array_append_val(ids, id);
	for (char **p = parents; *p; p++) {
		int r = chain_walk(l, *p, ids, seen);

		if (r < 0)
			return r;
	}
	return 0;
}

int lookup_chain(struct lookup *l, const char *theme, const long long **ret_ids,
		 unsigned *ret_n)
{
	GArray *ids = g_hash_table_lookup(l->chains, theme);

	if (!ids) {
		g_autoptr(GHashTable) seen = g_hash_table_new_full(
			g_str_hash, g_str_equal, g_free, NULL);

		int r;

		ids = g_array_new(FALSE, FALSE, sizeof(long long));
		r = chain_walk(l, theme, ids, seen);
		if (r >= 0)
			r = chain_walk(l, "hicolor", ids, seen);
		if (r < 0) {
			g_array_unref(ids);
			return r;
		}
		g_hash_table_insert(l->chains, g_strdup(theme), ids);
	}
	*ret_ids = (const long long *)ids->data;
	*ret_n = ids->len;
	return 0;
}

static char *icon_path(const char *dir, const char *name, int ext)
{
	return g_strdup_printf("%s/%s.%s", dir, name, icon_ext_name(ext));
}

static int base_dirs_load(struct lookup *l)
{
	int rc;

	if (g_hash_table_size(l->base_pos) > 0)
		return 0;
	while ((rc = sqlite3_step(l->bases_get)) == SQLITE_ROW)
		g_hash_table_insert(
			l->base_pos,
			g_memdup2(&(gint64){ sqlite3_column_int64(l->bases_get,
								  0) },
				  sizeof(gint64)),
			g_memdup2(&(int){ sqlite3_column_int(l->bases_get, 1) },
				  sizeof(int)));
	(void)sqlite3_reset(l->bases_get);
	if (rc != SQLITE_DONE)
		return db_log_error(l->db, rc, "cannot read base dirs");
	return 0;
}

/* The theme's subdirectories by relative path. */
static int subdirs_load(struct lookup *l, long long theme_id,
			GHashTable *subdirs)
{
	sqlite3_stmt *q = l->subdirs_get;
	int rc;

	sqlite3_bind_int64(q, 1, theme_id);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		struct pick_dir *sd = g_new(struct pick_dir, 1);

		*sd = (struct pick_dir){
			.pos = sqlite3_column_int(q, 1),
			.kde_known = theme_context_kde_known(db_column_str(q, 8)),
			.size = { .size = sqlite3_column_int(q, 2),
				  .scale = sqlite3_column_int(q, 3),
				  .type = sqlite3_column_int(q, 4),
				  .min_size = sqlite3_column_int(q, 5),
				  .max_size = sqlite3_column_int(q, 6),
				  .threshold = sqlite3_column_int(q, 7) },
		};
		g_hash_table_insert(subdirs, g_strdup(db_column_str(q, 0)), sd);
	}
	(void)sqlite3_reset(q);
	if (rc != SQLITE_DONE)
		return db_log_error(l->db, rc, "cannot read subdirectories");
	pick_dirs_group(subdirs);
	return 0;
}

/* Directory `i` is `listing` in `by_listing`: the index of the one it
 * is before, or -1. */
static int listing_add(GHashTable *by_listing, gint64 listing, int i)
{
	int first = GPOINTER_TO_INT(g_hash_table_lookup(by_listing, &listing));

	g_hash_table_replace(by_listing, g_memdup2(&listing, sizeof(listing)),
			     GINT_TO_POINTER(i + 1));
	return first - 1;
}

/* The first of `listing`'s directories in `by_listing`, or -1. */
static int listing_first(GHashTable *by_listing, gint64 listing)
{
	return GPOINTER_TO_INT(g_hash_table_lookup(by_listing, &listing)) - 1;
}

/* The theme's directories of icons by the listing they are (a directory
 * of a subdirectory or base dir the index does not know is left out). */
static int dirs_load(struct lookup *l, long long theme_id,
		     struct theme_dirs *td)
{
	sqlite3_stmt *q = l->dirs_get;
	int rc;

	sqlite3_bind_int64(q, 1, theme_id);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		gint64 base_id = sqlite3_column_int64(q, 1);
		const struct pick_dir *sd =
			g_hash_table_lookup(td->subdirs, db_column_str(q, 0));
		const int *bpos = g_hash_table_lookup(l->base_pos, &base_id);
		int i = (int)td->dirs->len;
		struct theme_dir d;

		if (!sd || !bpos)
			continue;
		d = (struct theme_dir){
			sd, g_string_chunk_insert(td->paths, db_column_str(q, 2)),
			*bpos,
			listing_add(td->own, sqlite3_column_int64(q, 3), i),
			sqlite3_column_type(q, 4) == SQLITE_NULL
				? -1
				: listing_add(td->below,
					      sqlite3_column_int64(q, 4), i),
		};
		g_array_append_val(td->dirs, d);
	}
	(void)sqlite3_reset(q);
	if (rc != SQLITE_DONE)
		return db_log_error(l->db, rc, "cannot read directories");
	return 0;
}

/* A theme's directories (and the base dirs' order), cached in `l`. */
static int theme_load(struct lookup *l, long long theme_id,
		      struct theme_dirs **ret)
{
	struct theme_dirs *td;
	int r;

	r = base_dirs_load(l);
	if (r < 0)
		return r;
	td = g_hash_table_lookup(l->themes, &theme_id);
	if (td) {
		*ret = td;
		return 0;
	}
	td = g_new(struct theme_dirs, 1);
	*td = (struct theme_dirs){
		.subdirs = g_hash_table_new_full(g_str_hash, g_str_equal,
						 g_free, g_free),
		.dirs = g_array_new(FALSE, FALSE, sizeof(struct theme_dir)),
		.paths = g_string_chunk_new(4096),
		.own = g_hash_table_new_full(g_int64_hash, g_int64_equal,
					     g_free, NULL),
		.below = g_hash_table_new_full(g_int64_hash, g_int64_equal,
					       g_free, NULL),
	};
	r = subdirs_load(l, theme_id, td->subdirs);
	if (r >= 0)
		r = dirs_load(l, theme_id, td);
	if (r < 0) {
		theme_dirs_free(td);
		return r;
	}
	g_hash_table_insert(l->themes, g_memdup2(&theme_id, sizeof(theme_id)),
			    td);
	*ret = td;
	return 0;
}

/* The icon rows of `name` in every theme, cached like the chains; NULL
 * and *ret_r the -errno when they cannot be read. */
static const GArray *name_rows_load(struct lookup *l, const char *name,
				    int *ret_r)
{
	sqlite3_stmt *q = l->name_rows;
	GArray *rows = g_hash_table_lookup(l->names, name);
	int rc;

	if (rows)
		return rows;
	rows = g_array_new(FALSE, FALSE, sizeof(struct name_row));
	sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		struct name_row row = { sqlite3_column_int64(q, 0),
					sqlite3_column_int(q, 1),
					sqlite3_column_int(q, 2) != 0 };

		g_array_append_val(rows, row);
	}
	(void)sqlite3_reset(q);
	if (rc != SQLITE_DONE) {
		g_array_unref(rows);
		/* the request fails; not logged per icon */
		*ret_r = db_errno(rc);
		return NULL;
	}
	if (g_hash_table_size(l->names) >= NAMES_KEPT)
		g_hash_table_remove_all(l->names);
	g_hash_table_insert(l->names, g_strdup(name), rows);
	return rows;
}

/* The theme's files of this name. */
static int theme_candidates(struct lookup *l, long long theme_id,
			    const char *name, GArray *out)
{
	struct theme_dirs *td = NULL;
	const GArray *rows;
	int r;

	r = theme_load(l, theme_id, &td);
	if (r < 0)
		return r;
	rows = name_rows_load(l, name, &r);
	if (!rows)
		return r;
	for (guint i = 0; i < rows->len; i++) {
		const struct name_row *row =
			&g_array_index(rows, struct name_row, i);
		int j = listing_first(row->below ? td->below : td->own,
				      row->listing);

		while (j >= 0) {
			const struct theme_dir *d =
				&g_array_index(td->dirs, struct theme_dir, j);
			struct pick_candidate c = { d->sd->pos, d->base_pos,
						    row->ext, d->sd, d->path };

			g_array_append_val(out, c);
			j = row->below ? d->next_below : d->next_own;
		}
	}
	return 0;
}

/* The file of `name` in one theme that the rules take. */
static int lookup_in_theme(struct lookup *l, long long theme_id,
			   const char *name, int size, int scale,
			   char **ret_path, int *ret_ext)
{
	GArray *c = l->cands;
	const struct pick_candidate *best;
	int r;

	r = theme_candidates(l, theme_id, name, c);
	if (r < 0)
		goto out;
	r = -ENOENT;
	if (c->len == 0)
		goto out; /* no file of that name in the theme */
	best = pick_file(l->rules, (struct pick_candidate *)c->data, c->len,
			 size, scale);
	r = best ? 0 : -ENOENT;
	if (best) {
		*ret_path = icon_path(best->dir, name, best->ext);
		*ret_ext = best->ext;
	}
out:
	g_array_set_size(c, 0);
	return r;
}

static int lookup_fallback(struct lookup *l, const char *name, char **ret_path,
			   int *ret_ext)
{
	sqlite3_stmt *q = l->icon_fallback;
	int rc, r = -ENOENT;

	sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(q);
	if (rc == SQLITE_ROW) {
		*ret_ext = sqlite3_column_int(q, 1);
		*ret_path = icon_path(db_column_str(q, 0), name, *ret_ext);
		r = 0;
	} else if (rc != SQLITE_DONE) {
		r = db_errno(rc);
	}
	(void)sqlite3_reset(q);
	return r;
}

/* KIconLoader searches each theme for the name and then for its less
 * specific names before the next theme: what it finds for "gnumeric-font"
 * in Papirus is Papirus's "gnumeric", not breeze's "gnumeric-font". */
static int lookup_in_theme_kde(struct lookup *l, long long theme_id,
			       const char *name, int size, int scale,
			       char **ret_path, int *ret_ext)
{
	g_autoptr(GString) cur = g_string_new(name);
	bool generic = g_str_has_suffix(name, "-x-generic");
	int r;

	do {
		r = lookup_in_theme(l, theme_id, cur->str, size, scale, ret_path,
				    ret_ext);
		if (r != -ENOENT)
			return r;
	} while (pick_kde_next_name(cur, &generic));
	return -ENOENT;
}

int lookup_icon(struct lookup *l, const char *theme, const char *name, int size,
		int scale, char **ret_path, int *ret_ext)
{
	const long long *ids;
	unsigned n;
	int r;

	if (!lookup_name_valid(name) || size < 1 || scale < 1)
		return -ENOENT;
	r = lookup_chain(l, theme, &ids, &n);
	if (r < 0)
		return r;
	for (unsigned i = 0; i < n; i++) {
		r = l->rules == LOOKUP_RULES_KDE
			    ? lookup_in_theme_kde(l, ids[i], name, size, scale,
						  ret_path, ret_ext)
			    : lookup_in_theme(l, ids[i], name, size, scale,
					      ret_path, ret_ext);
		if (r != -ENOENT)
			return r;
	}
	return lookup_fallback(l, name, ret_path, ret_ext);
}

static void lookup_dir_clear(gpointer p)
{
	g_free(((struct lookup_dir *)p)->path);
}

int lookup_theme_dirs(struct lookup *l, const char *theme, GArray **ret)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	GArray *dirs;
	int r;

	r = db_query_row(l->db, &q,
			 "SELECT s.path, s.size, s.scale, s.type, s.min_size, "
			 "s.max_size, s.threshold FROM theme t "
			 "LEFT JOIN subdir s ON s.theme_id = t.id "
			 "WHERE t.name = ?1 AND t.valid ORDER BY s.pos",
			 "t", theme);
	if (r < 0)
		return r;
	dirs = g_array_new(FALSE, FALSE, sizeof(struct lookup_dir));
	g_array_set_clear_func(dirs, lookup_dir_clear);
	do {
		struct lookup_dir d;

		if (sqlite3_column_type(q, 0) == SQLITE_NULL) {
			r = SQLITE_DONE; /* a theme without directories */
			break;
		}
		d = (struct lookup_dir){
			.path = g_strdup(db_column_str(q, 0)),
			.size = sqlite3_column_int(q, 1),
			.scale = sqlite3_column_int(q, 2),
			.type = sqlite3_column_int(q, 3),
			.min_size = sqlite3_column_int(q, 4),
			.max_size = sqlite3_column_int(q, 5),
			.threshold = sqlite3_column_int(q, 6),
		};
		g_array_append_val(dirs, d);
	} while ((r = sqlite3_step(q)) == SQLITE_ROW);
	if (r != SQLITE_ROW && r != SQLITE_DONE) {
		g_array_unref(dirs);
		return db_log_error(l->db, r, "cannot read subdirectories");
	}
	*ret = dirs;
	return 0;
}

int lookup_theme_exists(struct lookup *l, const char *theme)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;

	return db_query_row(l->db, &q,
			    "SELECT 1 FROM theme WHERE name = ?1 AND valid", "t",
			    theme);
}

int lookup_theme_info(struct lookup *l, const char *theme, char **ret_name,
		      char **ret_comment, char **ret_example)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	int r;

	r = db_query_row(l->db, &q,
			 "SELECT display_name, comment, example FROM theme "
			 "WHERE name = ?1 AND valid",
			 "t", theme);
	if (r < 0)
		return r;
	*ret_name = g_strdup(db_column_str(q, 0));
	*ret_comment = g_strdup(db_column_str(q, 1));
	*ret_example = g_strdup(db_column_str(q, 2));
	return 0;
}

int lookup_theme_kde_keys(struct lookup *l, const char *theme, char **ret)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	int r;

	r = db_query_row(l->db, &q,
			 "SELECT kde_keys FROM theme WHERE name = ?1 AND valid",
			 "t", theme);
	if (r < 0)
		return r;
	*ret = g_strdup(db_column_str(q, 0));
	return 0;
}

int lookup_themes(struct lookup *l, GPtrArray **ret)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	GPtrArray *names;
	int r;

	r = db_prepare(l->db,
		       "SELECT name FROM theme WHERE valid ORDER BY name", &q);
	if (r < 0)
		return r;
	names = g_ptr_array_new_with_free_func(g_free);
	while (sqlite3_step(q) == SQLITE_ROW)
		g_ptr_array_add(names, g_strdup(db_column_str(q, 0)));
	*ret = names;
	return 0;
}
