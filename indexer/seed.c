/* A new index seeded from the machine's; see seed.h. */
#include <errno.h>
#include <glib.h>

#include "db.h"
#include "log.h"
#include "seed.h"

/* What the index is made of, in an order the foreign keys allow; rows are
 * copied with their ids, so every reference stays as it is. */
static const char *const seed_tables[] = {
	"basedir", "theme", "subdir", "listing", "dir", "icon",
};

/* Whether every base directory of the attached layer that existed when it
 * was indexed is one of `basedirs`: else its rows are of no use here. */
static bool seed_fits(sqlite3 *db, char *const *basedirs)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;

	if (db_prepare(db, "SELECT path FROM layer.basedir WHERE ino != -1",
		       &q) < 0)
		return false;
	while (sqlite3_step(q) == SQLITE_ROW)
		if (!g_strv_contains((const char *const *)basedirs,
				     db_column_str(q, 0)))
			return false;
	return true;
}

static int seed_copy(sqlite3 *db)
{
	int r = db_exec(db, "BEGIN IMMEDIATE");

	for (size_t i = 0; i < G_N_ELEMENTS(seed_tables) && r >= 0; i++) {
		g_autofree char *sql = g_strdup_printf(
			"INSERT INTO main.%s SELECT * FROM layer.%s",
			seed_tables[i], seed_tables[i]);

		r = db_exec(db, sql);
	}
	if (r >= 0)
		r = db_exec(db, "COMMIT");
	if (r < 0)
		(void)db_exec(db, "ROLLBACK");
	return r;
}

int seed_from_layer(sqlite3 *db, const char *layer, char *const *basedirs)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	const char *why = NULL;
	int r;

	if (!layer || db_meta_get_int(db, "refreshed", 0) != 0 ||
	    db_query_row(db, &q, "SELECT 1 FROM icon LIMIT 1", "") != -ENOENT)
		return 0;
	r = db_file_trusted(layer, &why);
	if (r == -ENOENT)
		return 0; /* no layer on this machine */
	if (r >= 0) {
		r = db_attach_immutable(db, layer, "layer");
		why = r == -EPROTO ? "is from another iconfs version"
				   : "is not an iconfs index";
	}
	if (r >= 0 && !seed_fits(db, basedirs)) {
		(void)db_exec(db, "DETACH layer");
		return 0; /* other directories: nothing to start from */
	}
	if (r >= 0) {
		r = seed_copy(db);
		why = "cannot be copied";
		(void)db_exec(db, "DETACH layer");
	}
	if (r < 0) {
		log_info("the machine's index in '%s' %s: indexing every "
			 "directory",
			 layer, why);
		return 0;
	}
	log_info("the index starts from the machine's, in '%s'", layer);
	return 1;
}
