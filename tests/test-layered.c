/* A user's index layered over the machine's (layered.h): it answers every
 * lookup as an index read from the directories does while holding none of
 * the machine's icon rows; a directory that changed, or the user's own, is
 * read into the user's file; a machine's index rebuilt in place of the old
 * one still serves every directory that did not change; one that cannot
 * serve any more (gone, of other directories) makes the index read every
 * directory; further connections see the same. */
#include <glib/gstdio.h>

#include "fixture.h"
#include "layered.h"
#include "lookup-chain.h"
#include "test.h"

struct layers {
	struct fixture *f;    /* the themes, and the user's index at f->db */
	char *machine;	      /* the machine's index of f->base */
	char *user_base;      /* the user's own base directory */
	char *bases[3];	      /* user_base, f->base */
};

static struct layers *layers_new(void)
{
	struct layers *x = g_new0(struct layers, 1);

	x->f = fixture_new();
	x->machine = g_build_filename(x->f->dir, "machine.sqlite", NULL);
	x->user_base = g_build_filename(x->f->dir, "home-icons", NULL);
	x->bases[0] = x->user_base;
	x->bases[1] = x->f->base;
	fixture_themes(x->f);
	return x;
}

static void layers_free(struct layers *x)
{
	fixture_free(x->f);
	g_free(x->machine);
	g_free(x->user_base);
	g_free(x);
}

/* (Re)build the machine's index of the system's base directory alone. */
static int machine_build(struct layers *x)
{
	_cleanup_(sqlite3_closep) sqlite3 *db = NULL;
	char *system[] = { x->f->base, NULL };

	return index_open(x->machine, NULL, system, INDEX_NOT_LAYERED, NULL, &db,
			  NULL);
}

/* Open the user's index at `path` over `machine` (NULL: as it was) with
 * `flags`, replacing *db. */
static int user_open(struct layers *x, const char *path, const char *machine,
		     unsigned flags, sqlite3 **db)
{
	if (*db)
		sqlite3_close(*db);
	*db = NULL;
	return index_open(path, machine, x->bases, flags, NULL, db, NULL);
}

static long long count_of(sqlite3 *db, const char *sql)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;

	if (db_query_row(db, &q, sql, "") < 0)
		return -1;
	return sqlite3_column_int64(q, 0);
}

/* What a mount would answer from `db`, as one string: theme t's names,
 * then for each of them and each size the file picked. */
static char *answers(sqlite3 *db)
{
	_cleanup_(lookup_freep) struct lookup *l = NULL;
	g_autoptr(GPtrArray) names = NULL;
	struct index_stats st = { 0 };
	GString *out = g_string_new("");
	static const int sizes[] = { 16, 24, 32, 48, 64 };

	if (lookup_new(db, LOOKUP_RULES_GTK, &l) < 0 ||
	    lookup_names(l, "t", &names) < 0 || index_stats(db, &st) < 0)
		return g_string_free(out, FALSE);
	g_string_append_printf(out, "%lld icons:", st.icons);
	for (guint i = 0; i < names->len; i++)
		g_string_append_printf(out, " %s", (char *)names->pdata[i]);
	for (guint i = 0; i < names->len; i++)
		for (size_t s = 0; s < G_N_ELEMENTS(sizes); s++) {
			g_autofree char *path = NULL;
			int ext;

			if (lookup_icon(l, "t", names->pdata[i], sizes[s], 1,
					&path, &ext) == 0)
				g_string_append_printf(out, "\n%s %d %s",
						       (char *)names->pdata[i],
						       sizes[s], path);
		}
	return g_string_free(out, FALSE);
}

/* The answers of an index of the same directories read from them. */
static char *answers_read(struct layers *x);

/* Whether `db` answers as an index read from the directories, which has
 * `must` among its answers. */
static bool same_as_read(struct layers *x, sqlite3 *db, const char *must)
{
	g_autofree char *layered = answers(db);
	g_autofree char *read = answers_read(x);

	if (!strstr(read, must) || strcmp(layered, read) != 0) {
		printf("# layered:\n%s\n# read:\n%s\n", layered, read);
		return false;
	}
	return true;
}


static char *answers_read(struct layers *x)
{
	g_autofree char *path = g_build_filename(x->f->dir, "full.sqlite", NULL);
	_cleanup_(sqlite3_closep) sqlite3 *db = NULL;

	if (user_open(x, path, NULL, INDEX_NOT_LAYERED, &db) < 0)
		return g_strdup("");
	return answers(db);
}

TEST(same_answers_without_the_icons)
{
	struct layers *x = layers_new();
	sqlite3 *db = NULL;

	ASSERT_EQ_INT(machine_build(x), 0);
	ASSERT_EQ_INT(user_open(x, x->f->db_path, x->machine, 0, &db), 0);
	ASSERT_EQ_INT(count_of(db, "SELECT count(*) FROM main.icon"), 0);
	ASSERT_TRUE(count_of(db, "SELECT count(*) FROM listing WHERE below") >
		    0);
	ASSERT_TRUE(same_as_read(x, db, "t/16/a.png"));
	/* a second open: still layered, nothing read */
	ASSERT_EQ_INT(user_open(x, x->f->db_path, NULL, 0, &db), 0);
	ASSERT_EQ_INT(count_of(db, "SELECT count(*) FROM main.icon"), 0);
	sqlite3_close(db);
	layers_free(x);
}

TEST(changed_and_own_directories_read_into_the_user_index)
{
	struct layers *x = layers_new();
	g_autofree char *own = NULL, *moved = NULL, *mine = NULL;
	sqlite3 *db = NULL;

	ASSERT_EQ_INT(machine_build(x), 0);
	ASSERT_EQ_INT(user_open(x, x->f->db_path, x->machine, 0, &db), 0);
	/* changed since the machine's index was built; and the user's own
	 * directory of theme t, whose index.theme is the machine's */
	fixture_png(x->f, "t/16/new.png", 16);
	own = g_build_filename(x->user_base, "t", "32", NULL);
	g_mkdir_with_parents(own, 0755);
	moved = g_build_filename(x->f->base, "t", "32", "a.png", NULL);
	mine = g_build_filename(own, "mine.png", NULL);
	ASSERT_EQ_INT(g_rename(moved, mine), 0);
	ASSERT_EQ_INT(user_open(x, x->f->db_path, NULL, 0, &db), 0);
	/* t/16, t/32 and the user's t/32 hold their own rows now */
	ASSERT_EQ_INT(count_of(db, "SELECT count(*) FROM main.icon"), 3);
	ASSERT_TRUE(count_of(db, "SELECT count(*) FROM listing WHERE below") >
		    0);
	ASSERT_TRUE(same_as_read(x, db, "new 16 "));
	ASSERT_TRUE(same_as_read(x, db, "home-icons/t/32/mine.png"));
	sqlite3_close(db);
	layers_free(x);
}

TEST(machine_rebuilt_still_serves)
{
	struct layers *x = layers_new();
	g_autofree char *before = NULL, *after = NULL, *read = NULL;
	sqlite3 *db = NULL, *other = NULL;

	ASSERT_EQ_INT(machine_build(x), 0);
	ASSERT_EQ_INT(user_open(x, x->f->db_path, x->machine, 0, &db), 0);
	before = answers(db);
	/* the service rebuilds the machine's index after a change that the
	 * user's index has not seen yet: a new connection reads the new
	 * file, whose row ids need not be the old ones */
	fixture_png(x->f, "t/16/new.png", 16);
	g_unlink(x->machine);
	ASSERT_EQ_INT(machine_build(x), 0);
	ASSERT_EQ_INT(index_connect(x->f->db_path, DB_QUERY_ONLY, 1000, &other),
		      0);
	ASSERT_TRUE(sqlite3_db_filename(other, "machine") != NULL);
	after = answers(other);
	/* t/16 is below no more until the user's refresh reads it: its a
	 * goes from 16 px, every other answer is as it was */
	ASSERT_TRUE(strstr(before, "a 16 ") != NULL);
	ASSERT_TRUE(strstr(after, "c 48 ") != NULL);
	ASSERT_TRUE(strstr(after, "/t/16/") == NULL);
	ASSERT_EQ_INT(user_open(x, x->f->db_path, NULL, 0, &db), 0);
	g_free(after);
	after = answers(db);
	read = answers_read(x);
	ASSERT_EQ_STR(after, read);
	sqlite3_close(other);
	sqlite3_close(db);
	layers_free(x);
}

TEST(machine_that_cannot_serve_means_reading_every_directory)
{
	struct layers *x = layers_new();
	g_autofree char *read = NULL, *gone = NULL, *foreign = NULL;
	char *other_bases[] = { x->user_base, NULL };
	sqlite3 *db = NULL;

	ASSERT_EQ_INT(machine_build(x), 0);
	ASSERT_EQ_INT(user_open(x, x->f->db_path, x->machine, 0, &db), 0);
	read = answers_read(x);
	/* gone */
	g_unlink(x->machine);
	ASSERT_EQ_INT(user_open(x, x->f->db_path, NULL, 0, &db), 0);
	ASSERT_EQ_INT(count_of(db, "SELECT count(*) FROM listing WHERE below"),
		      0);
	ASSERT_EQ_INT(count_of(db, "SELECT count(*) FROM meta "
				   "WHERE key = 'below'"),
		      0);
	gone = answers(db);
	ASSERT_EQ_STR(gone, read);
	/* of other directories than the user's: not layered over */
	ASSERT_EQ_INT(machine_build(x), 0);
	sqlite3_close(db);
	db = NULL;
	ASSERT_EQ_INT(index_open(x->f->db_path, x->machine, other_bases, 0, NULL, &db,
				 NULL),
		      0);
	ASSERT_EQ_INT(count_of(db, "SELECT count(*) FROM listing WHERE below"),
		      0);
	/* layered again, then refused by hand (--no-shared-db) */
	ASSERT_EQ_INT(user_open(x, x->f->db_path, x->machine, 0, &db), 0);
	ASSERT_TRUE(count_of(db, "SELECT count(*) FROM listing WHERE below") >
		    0);
	ASSERT_EQ_INT(user_open(x, x->f->db_path, x->machine, INDEX_NOT_LAYERED,
				&db),
		      0);
	ASSERT_EQ_INT(count_of(db, "SELECT count(*) FROM listing WHERE below"),
		      0);
	foreign = answers(db);
	ASSERT_EQ_STR(foreign, read);
	sqlite3_close(db);
	layers_free(x);
}

/* What `db` reads of theme t's derived row "kind" through
 * layered_derived_sql(), or "" for none. */
static char *derived(sqlite3 *db)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	g_autofree char *sql = layered_derived_sql(
		db,
		"SELECT data FROM {schema}.synth WHERE theme = 't' AND "
		"generation = (SELECT value FROM {schema}.meta "
		"WHERE key = 'generation')",
		"SELECT data FROM ({arms}) LIMIT 1");

	if (db_query_row(db, &q, sql, "") < 0)
		return g_strdup("");
	return g_strdup(db_column_str(q, 0));
}

/* The machine's derived rows (its synthesized files) hold for a user's
 * index while it is the machine's copy, and no more once it changed. */
TEST(machine_synthesized_files_until_changed)
{
	struct layers *x = layers_new();
	_cleanup_(sqlite3_closep) sqlite3 *m = NULL;
	g_autofree char *before = NULL, *after = NULL;
	sqlite3 *db = NULL;

	ASSERT_EQ_INT(machine_build(x), 0);
	ASSERT_EQ_INT(db_open(x->machine, 0, &m), 0);
	ASSERT_EQ_INT(db_exec(m, "INSERT INTO synth VALUES ('t', 'kind', "
				 "(SELECT value FROM meta WHERE key = "
				 "'generation'), 'test', 'machine''s')"),
		      0);
	sqlite3_close(TAKE_PTR(m));
	ASSERT_EQ_INT(user_open(x, x->f->db_path, x->machine, 0, &db), 0);
	ASSERT_TRUE(layered_as_machine(db));
	before = derived(db);
	ASSERT_EQ_STR(before, "machine's");
	/* a second open changes nothing */
	ASSERT_EQ_INT(user_open(x, x->f->db_path, NULL, 0, &db), 0);
	ASSERT_TRUE(layered_as_machine(db));
	/* a directory read: the index is its own */
	fixture_png(x->f, "t/16/new.png", 16);
	ASSERT_EQ_INT(user_open(x, x->f->db_path, NULL, 0, &db), 0);
	ASSERT_TRUE(!layered_as_machine(db));
	after = derived(db);
	ASSERT_EQ_STR(after, "");
	sqlite3_close(db);
	layers_free(x);
}

TEST_MAIN(TEST_CASE(same_answers_without_the_icons),
	  TEST_CASE(changed_and_own_directories_read_into_the_user_index),
	  TEST_CASE(machine_rebuilt_still_serves),
	  TEST_CASE(machine_that_cannot_serve_means_reading_every_directory),
	  TEST_CASE(machine_synthesized_files_until_changed))
