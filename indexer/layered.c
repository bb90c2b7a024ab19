/* A user's index layered over the machine's; see layered.h. */
#include <errno.h>
#include <glib.h>

#include "db.h"
#include "layered.h"
#include "log.h"
#include "rows.h"

/* The meta key naming the machine's index a layered index is over. */
#define BELOW_KEY "below"
/* ... and the ones dating the index as the machine's copy: its own
 * generation and the machine's then (layered_as_machine). */
#define AS_MACHINE_KEY	       "below_generation"
#define AS_MACHINE_MACHINE_KEY "below_machine_generation"

/* What an index is made of but its icons, in an order the foreign keys
 * allow; rows are copied with their ids, so every reference stays. */
static const char *const copied_tables[] = {
	"basedir", "theme", "subdir", "listing", "dir",
};

/* The machine's listing `ml` is the user's listing `ul`: the same
 * directory with the same stamp. */
#define SAME_LISTING                                                          \
	"ml.dev = ul.dev AND ml.ino = ul.ino AND ml.mtime_ns = ul.mtime_ns "  \
	"AND ml.ctime_ns = ul.ctime_ns"

/* The machine's icons seen from the user's index: each row of a listing of
 * the machine's whose directory and stamp are those of one of the user's
 * listings below, under that listing's id. */
#define ICONS_BELOW                                                           \
	"(SELECT mi.name AS name, ul.id AS listing_id, mi.ext AS ext "        \
	"FROM main.listing ul JOIN machine.listing ml ON " SAME_LISTING       \
	" JOIN machine.icon mi ON mi.listing_id = ml.id WHERE ul.below)"

/* One name's rows: the index's own, then the machine's (their listing ids
 * the machine's). */
#define NAME_ROWS_OWN "SELECT listing_id, ext, 0 FROM main.icon WHERE name = ?1"
#define NAME_ROWS_BELOW                                                       \
	" UNION ALL SELECT listing_id, ext, 1 FROM machine.icon WHERE name = ?1"
#define LISTING_BELOW                                                         \
	"(SELECT ml.id FROM machine.listing ml WHERE ul.below AND "           \
	SAME_LISTING ")"

static char *replaced(const char *s, const char *token, const char *by)
{
	g_auto(GStrv) parts = g_strsplit(s, token, -1);

	return g_strjoinv(by, parts);
}

/* `arm` with `token` as `own`, UNION ALL (when `below` is not NULL) the
 * same with it as `below`; wrapped in `outer` where it says {arms}. */
static char *arms_sql(const char *arm, const char *token, const char *own,
		      const char *below, const char *outer)
{
	g_autofree char *arms = replaced(arm, token, own);

	if (below) {
		g_autofree char *more = replaced(arm, token, below);
		g_autofree char *both =
			g_strconcat(arms, " UNION ALL ", more, NULL);

		g_free(arms);
		arms = g_steal_pointer(&both);
	}
	return outer ? replaced(outer, "{arms}", arms) : g_steal_pointer(&arms);
}

char *layered_icons_sql(sqlite3 *db, const char *arm, const char *outer)
{
	return arms_sql(arm, "{icon}", "main.icon",
			layered_over_machine(db) ? ICONS_BELOW : NULL,
			outer);
}

char *layered_name_rows_sql(sqlite3 *db)
{
	return g_strdup(layered_over_machine(db)
				? NAME_ROWS_OWN NAME_ROWS_BELOW
				: NAME_ROWS_OWN);
}

const char *layered_listing_below_sql(sqlite3 *db)
{
	return layered_over_machine(db) ? LISTING_BELOW : "NULL";
}

/* The machine's index is read-only and in the page cache: each connection
 * keeps only the pages every lookup walks (the b-trees' upper levels). */
#define MACHINE_CACHE_KIB 128

/* Attach the index at `path` as `machine`; *ret_why says why not. */
static int machine_attach(sqlite3 *db, const char *path, const char **ret_why)
{
	int r;

	r = db_file_trusted(path, ret_why);
	if (r < 0)
		return r;
	r = db_attach_immutable(db, path, "machine");
	if (r < 0) {
		*ret_why = r == -EPROTO ? "is from another iconfs version"
					: "is not an iconfs index";
		return r;
	}
	(void)db_exec(db, "PRAGMA machine.cache_size = -" G_STRINGIFY(
				  MACHINE_CACHE_KIB));
	return 0;
}

/* Whether the attached machine's index can be under an index of
 * `basedirs`: every base directory of it that existed when it was indexed
 * is one of them (else its rows are of no use here), and it is an index
 * read from its directories, not itself layered. */
static bool machine_fits(sqlite3 *db, char *const *basedirs)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *layered = NULL;

	if (db_query_row(db, &layered,
			 "SELECT 1 FROM machine.listing WHERE below LIMIT 1",
			 "") != -ENOENT)
		return false;
	if (db_query(db, &q,
		     "SELECT b.path FROM machine.basedir b JOIN machine.dir d "
		     "ON d.basedir_id = b.id AND d.kind = ?1 WHERE d.ino != -1",
		     "i", DIR_KIND_BASE) < 0)
		return false;
	while (sqlite3_step(q) == SQLITE_ROW)
		if (!g_strv_contains((const char *const *)basedirs,
				     db_column_str(q, 0)))
			return false;
	return true;
}

/* Empty the index's tables (the renders stay) and date what was derived
 * from them; inside the caller's transaction. */
static int index_empty(sqlite3 *db)
{
	static const char *const sql[] = {
		"DELETE FROM icon",	"DELETE FROM dir",
		"DELETE FROM subdir",	"DELETE FROM listing",
		"DELETE FROM theme",	"DELETE FROM basedir",
	};
	int r = 0;

	for (size_t i = 0; i < G_N_ELEMENTS(sql) && r >= 0; i++)
		r = db_exec(db, sql[i]);
	if (r >= 0)
		r = db_meta_set_int(db, "generation",
				    db_meta_get_int(db, "generation", 0) + 1);
	return r;
}

/* Start the index again as the copy of the attached machine's (`path`),
 * or (path NULL) empty, to be read from the directories. */
static int index_restart(sqlite3 *db, const char *path)
{
	int r = db_exec(db, "BEGIN IMMEDIATE");

	if (r >= 0)
		r = index_empty(db);
	for (size_t i = 0; path && i < G_N_ELEMENTS(copied_tables) && r >= 0;
	     i++) {
		g_autofree char *sql =
			streq(copied_tables[i], "listing")
				? g_strdup("INSERT INTO main.listing SELECT "
					   "id, dev, ino, mtime_ns, ctime_ns, "
					   "1 FROM machine.listing")
				: g_strdup_printf("INSERT INTO main.%s SELECT "
						  "* FROM machine.%s",
						  copied_tables[i],
						  copied_tables[i]);

		r = db_exec(db, sql);
	}
	if (r >= 0)
		r = db_meta_set_text(db, BELOW_KEY, path);
	if (r >= 0)
		r = db_meta_set_text(db, AS_MACHINE_KEY, NULL);
	if (r >= 0)
		r = db_meta_set_text(db, AS_MACHINE_MACHINE_KEY, NULL);
	if (r >= 0)
		r = db_exec(db, "COMMIT");
	if (r < 0)
		(void)db_exec(db, "ROLLBACK");
	return r;
}

/* Whether the index has ever been read (else nobody needs to hear that it
 * is read from the directories). */
static bool index_was_read(sqlite3 *db)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;

	return db_query_row(db, &q, "SELECT 1 FROM listing LIMIT 1", "") == 0;
}

int layered_open(sqlite3 *db, const char *layer, bool layer_none,
		 char *const *basedirs, char **ret_copy)
{
	g_autofree char *was = db_meta_get_text(db, BELOW_KEY);
	const char *why = layer_none ? "is not to be read" : "cannot be read";
	int r = -ENOENT;

	*ret_copy = NULL;
	if (!layer && !layer_none)
		layer = was;
	if (layer && !layer_none)
		r = machine_attach(db, layer, &why);
	if (r >= 0 && !machine_fits(db, basedirs)) {
		(void)db_exec(db, "DETACH machine");
		why = "is of other directories";
		r = -EXDEV;
	}
	if (r >= 0) {
		if (!was || !streq(was, layer))
			*ret_copy = g_strdup(layer);
		return 1; /* layered over it as before, or to be its copy */
	}
	/* a layer that cannot serve: said once, when it could matter */
	if (was || (layer && r != -ENOENT && !index_was_read(db)))
		log_info("the machine's index in '%s' %s: indexing every "
			 "directory",
			 was ? was : layer, why);
	if (was)
		return index_restart(db, NULL) < 0 ? -EIO : 0;
	return 0;
}

int layered_copy(sqlite3 *db, const char *layer)
{
	g_autofree char *was = NULL;

	if (index_restart(db, layer) >= 0) {
		log_info("the index is layered over the machine's, in '%s'",
			 layer);
		return 1;
	}
	(void)db_exec(db, "DETACH machine");
	log_info("the machine's index in '%s' cannot be copied: indexing "
		 "every directory",
		 layer);
	was = db_meta_get_text(db, BELOW_KEY);
	if (was)
		return index_restart(db, NULL) < 0 ? -EIO : 0;
	return 0;
}

int layered_attach(sqlite3 *db)
{
	g_autofree char *below = db_meta_get_text(db, BELOW_KEY);
	const char *why = NULL;
	int r;

	if (!below || layered_over_machine(db))
		return 0;
	r = machine_attach(db, below, &why);
	if (r < 0)
		log_warning("the machine's index in '%s' %s: its icons are "
			    "missing until the next mount",
			    below, why);
	return r;
}

/* The existing base directories of `schema`, in its order. */
static char *bases_in_order(sqlite3 *db, const char *schema)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	g_autofree char *sql = g_strdup_printf(
		"SELECT group_concat(path, ':') FROM (SELECT b.path FROM "
		"%1$s.basedir b JOIN %1$s.dir d ON d.basedir_id = b.id "
		"AND d.kind = ?1 WHERE d.ino != -1 ORDER BY b.pos)",
		schema);

	if (db_query_row(db, &q, sql, "i", DIR_KIND_BASE) < 0)
		return NULL;
	return g_strdup(db_column_str(q, 0));
}

static long long machine_generation(sqlite3 *db)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;

	if (db_query_row(db, &q,
			 "SELECT value FROM machine.meta WHERE key = "
			 "'generation'",
			 "") < 0)
		return -1;
	return sqlite3_column_int64(q, 0);
}

int layered_settled(sqlite3 *db, bool restarted, unsigned dirs_read)
{
	g_autofree char *own = NULL, *machine = NULL;
	int r;

	if (!restarted || dirs_read > 0 || !layered_over_machine(db))
		return 0;
	own = bases_in_order(db, "main");
	machine = bases_in_order(db, "machine");
	if (!own || !machine || !streq(own, machine))
		return 0;
	r = db_meta_set_int(db, AS_MACHINE_MACHINE_KEY,
			    machine_generation(db));
	if (r >= 0)
		r = db_meta_set_int(db, AS_MACHINE_KEY,
				    db_meta_get_int(db, "generation", 0));
	return r;
}

bool layered_over_machine(sqlite3 *db)
{
	return sqlite3_db_filename(db, "machine") != NULL;
}

bool layered_as_machine(sqlite3 *db)
{
	return layered_over_machine(db) &&
	       db_meta_get_int(db, AS_MACHINE_KEY, -1) ==
		       db_meta_get_int(db, "generation", -2) &&
	       db_meta_get_int(db, AS_MACHINE_MACHINE_KEY, -1) ==
		       machine_generation(db);
}

char *layered_derived_sql(sqlite3 *db, const char *arm, const char *outer)
{
	return arms_sql(arm, "{schema}", "main",
			layered_as_machine(db) ? "machine" : NULL, outer);
}

char *layered_shadowed_sql(sqlite3 *db, const char *table)
{
	if (!layered_as_machine(db))
		return NULL;
	return g_strdup_printf(
		"DELETE FROM main.%1$s WHERE EXISTS (SELECT 1 FROM "
		"machine.%1$s m WHERE m.theme = %1$s.theme AND m.kind = "
		"%1$s.kind AND m.made_by = %1$s.made_by AND m.generation = "
		"(SELECT value FROM machine.meta WHERE key = 'generation'))",
		table);
}
