/* The synthesized files (synth.h): the sizes a theme lists, index.theme as
 * GKeyFile reads it back, icon-theme.cache's header and lists, and one
 * generation that decides what is kept. */
#include <errno.h>

#include "fixture.h"
#include "index.h"
#include "layered.h"
#include "scan.h"
#include "synth.h"
#include "test.h"

TEST(index_theme)
{
	struct fixture *f = fixture_new();
	struct synth *s = NULL;
	struct generation gen = { 0 };
	g_autoptr(GBytes) text = NULL;
	g_autoptr(GKeyFile) kf = g_key_file_new();
	g_autofree char *dirs = NULL, *comment = NULL;
	g_autoptr(GArray) sizes = NULL;

	fixture_themes(f);
	fixture_write(f, "t/index.theme",
		      "[Icon Theme]\nName=Tee\nComment=one\\n[Injected]\\nX=1\n"
		      "Inherits=parent\nDirectories=16\n\n[16]\nSize=16\n"
		      "Type=Fixed\n",
		      -1);
	/* one directory GTK attaches built-in icons under, one it does not */
	fixture_write(f, "hicolor/index.theme",
		      "[Icon Theme]\nName=Hicolor\nDirectories=64,16x16/actions\n\n"
		      "[64]\nSize=64\nType=Fixed\n\n[16x16/actions]\nSize=16\n"
		      "Type=Threshold\n",
		      -1);
	ASSERT_EQ_INT(fixture_index(f), 0);
	ASSERT_EQ_INT(synth_new(&gen, &s), 0);
	ASSERT_EQ_INT(synth_sizes(f->l, "t", &sizes), 0);
	/* the standard ten and the chain's own (16 and 64 are standard, 48
	 * (parent) too), and under gtk twice the standard ones: 44 and 192
	 * are new, twelve in all */
	ASSERT_EQ_INT(sizes->len, 12);
	ASSERT_EQ_INT(synth_file(s, f->l, "t", SYNTH_INDEX_THEME, &text), 0);
	ASSERT_TRUE(g_key_file_load_from_data(kf, g_bytes_get_data(text, NULL),
					      g_bytes_get_size(text),
					      G_KEY_FILE_NONE, NULL));
	comment = g_key_file_get_string(kf, "Icon Theme", "Comment", NULL);
	ASSERT_EQ_STR(comment, "one\n[Injected]\nX=1");
	ASSERT_TRUE(!g_key_file_has_group(kf, "Injected"));
	dirs = g_key_file_get_string(kf, "Icon Theme", "Directories", NULL);
	ASSERT_TRUE(dirs && g_str_has_prefix(dirs, "16x16,22x22,") &&
		    g_str_has_suffix(dirs, ",scalable"));
	/* under gtk an @2 view only where the chain has a Scale=2
	 * directory of that Size (scaled_views): t's has none */
	ASSERT_TRUE(!g_key_file_has_key(kf, "Icon Theme", "ScaledDirectories", NULL));
	ASSERT_TRUE(!g_key_file_has_group(kf, "32x32@2"));
	ASSERT_TRUE(strstr(dirs, ",44x44,") != NULL);
	/* only hicolor's lists real directories too, those GTK attaches its
	 * built-in icons under, with their own keys */
	ASSERT_TRUE(!g_key_file_has_group(kf, "16"));
	g_clear_pointer(&text, g_bytes_unref);
	g_clear_pointer(&dirs, g_free);
	ASSERT_EQ_INT(synth_file(s, f->l, "hicolor", SYNTH_INDEX_THEME, &text), 0);
	ASSERT_TRUE(g_key_file_load_from_data(kf, g_bytes_get_data(text, NULL),
					      g_bytes_get_size(text),
					      G_KEY_FILE_NONE, NULL));
	dirs = g_key_file_get_string(kf, "Icon Theme", "Directories", NULL);
	ASSERT_TRUE(dirs && g_str_has_suffix(dirs, ",scalable,16x16/actions"));
	ASSERT_TRUE(!g_key_file_has_group(kf, "64"));
	ASSERT_EQ_INT(g_key_file_get_integer(kf, "16x16/actions", "Size", NULL), 16);
	g_autofree char *type = g_key_file_get_string(kf, "16x16/actions", "Type", NULL);
	ASSERT_EQ_STR(type, "Threshold");
	synth_free(s);
	fixture_free(f);
}

/* Under gtk, an @2 view of each Size of the chain's Scale=2 directories,
 * which GTK takes at scale 2 before the 2N×2N view of the same pixels;
 * under qt one of every size view. */
TEST(scaled_views)
{
	static const enum lookup_rules rules[] = { LOOKUP_RULES_GTK,
						   LOOKUP_RULES_QT };

	for (size_t i = 0; i < G_N_ELEMENTS(rules); i++) {
		struct fixture *f = fixture_new();
		struct synth *s = NULL;
		g_autoptr(GBytes) text = NULL;
		g_autoptr(GKeyFile) kf = g_key_file_new();
		g_autoptr(GArray) scaled = NULL;
		g_autofree char *list = NULL;

		f->rules = rules[i];
		fixture_write(f, "t/index.theme",
			      "[Icon Theme]\nName=Tee\nDirectories=16,32\n"
			      "ScaledDirectories=16@2\n\n[16]\nSize=16\n"
			      "Type=Fixed\n\n[32]\nSize=32\nType=Fixed\n\n"
			      "[16@2]\nSize=16\nScale=2\nType=Fixed\n",
			      -1);
		fixture_png(f, "t/16/a.png", 16);
		fixture_png(f, "t/32/a.png", 32);
		fixture_png(f, "t/16@2/a.png", 32);
		ASSERT_EQ_INT(fixture_index(f), 0);
		ASSERT_EQ_INT(synth_new(NULL, &s), 0);
		ASSERT_EQ_INT(synth_scaled_sizes(f->l, "t", &scaled), 0);
		if (rules[i] == LOOKUP_RULES_GTK) {
			ASSERT_EQ_INT(scaled->len, 1);
			ASSERT_EQ_INT(g_array_index(scaled, int, 0), 16);
		} else {
			ASSERT_TRUE(scaled->len > 1);
		}
		ASSERT_EQ_INT(synth_file(s, f->l, "t", SYNTH_INDEX_THEME, &text),
			      0);
		ASSERT_TRUE(g_key_file_load_from_data(
			kf, g_bytes_get_data(text, NULL), g_bytes_get_size(text),
			G_KEY_FILE_NONE, NULL));
		list = g_key_file_get_string(kf, "Icon Theme",
					     "ScaledDirectories", NULL);
		ASSERT_TRUE(list != NULL);
		ASSERT_EQ_INT(
			g_key_file_get_integer(kf, "16x16@2", "Scale", NULL), 2);
		ASSERT_EQ_INT(
			g_key_file_get_integer(kf, "16x16@2", "Size", NULL), 16);
		if (rules[i] == LOOKUP_RULES_GTK) {
			ASSERT_EQ_STR(list, "16x16@2");
			ASSERT_TRUE(!g_key_file_has_group(kf, "32x32@2"));
		} else {
			ASSERT_TRUE(g_key_file_has_group(kf, "32x32@2"));
		}
		synth_free(s);
		fixture_free(f);
	}
}

TEST(cache_and_generation)
{
	struct fixture *f = fixture_new();
	struct synth *s = NULL;
	struct generation gen = { 0 };
	g_autoptr(GBytes) a = NULL, b = NULL, c = NULL;
	g_autoptr(GPtrArray) names = NULL, svg = NULL;
	const guint8 *d;

	fixture_themes(f);
	ASSERT_EQ_INT(fixture_index(f), 0);
	ASSERT_EQ_INT(synth_new(&gen, &s), 0);
	ASSERT_EQ_INT(synth_names(s, f->l, "t", false, &names), 0);
	ASSERT_EQ_INT(names->len, 5);
	ASSERT_EQ_INT(synth_names(s, f->l, "t", true, &svg), 0);
	ASSERT_EQ_INT(svg->len, 2); /* a and b-symbolic resolve to SVGs */
	ASSERT_EQ_INT(synth_file(s, f->l, "t", SYNTH_ICON_CACHE, &a), 0);
	d = g_bytes_get_data(a, NULL);
	ASSERT_TRUE(g_bytes_get_size(a) > 12);
	ASSERT_EQ_INT(d[0] << 8 | d[1], 1); /* major version */
	ASSERT_EQ_INT(d[2] << 8 | d[3], 0); /* minor version */
	/* kept: the same bytes again */
	ASSERT_EQ_INT(synth_file(s, f->l, "t", SYNTH_ICON_CACHE, &b), 0);
	ASSERT_TRUE(a == b);
	/* after the index changed: built again */
	generation_bump(&gen);
	synth_invalidate(s);
	ASSERT_EQ_INT(synth_file(s, f->l, "t", SYNTH_ICON_CACHE, &c), 0);
	ASSERT_TRUE(c != a && g_bytes_equal(a, c));
	synth_free(s);
	fixture_free(f);
}

/* What synth_store() keeps in the index is what the next mount serves,
 * without building, until the index changes. */
TEST(stored_for_the_next_mount)
{
	struct fixture *f = fixture_new();
	const char *themes[] = { "t", NULL };
	struct synth *first = NULL, *next = NULL, *after = NULL;
	g_autoptr(GBytes) a = NULL, b = NULL, c = NULL;
	sqlite3_stmt *q = NULL;
	struct scan_stats st;

	fixture_themes(f);
	ASSERT_EQ_INT(fixture_index(f), 0);
	ASSERT_EQ_INT(synth_new(NULL, &first), 0);
	ASSERT_EQ_INT(synth_store(first, f->l, f->db, themes, -1), 0);
	ASSERT_EQ_INT(
		db_query_row(f->db, &q,
			     "SELECT count(*) FROM synth WHERE theme = ?1", "t",
			     "t"),
		0);
	ASSERT_EQ_INT(sqlite3_column_int(q, 0), 7); /* one per kind */
	sqlite3_finalize(q);
	ASSERT_EQ_INT(synth_file(first, f->l, "t", SYNTH_ICON_CACHE, &a), 0);

	ASSERT_EQ_INT(synth_new(NULL, &next), 0);
	ASSERT_EQ_INT(synth_file(next, f->l, "t", SYNTH_ICON_CACHE, &b), 0);
	ASSERT_TRUE(g_bytes_equal(a, b));
	ASSERT_TRUE(!synth_unstored(next)); /* read, not built */

	fixture_png(f, "t/16/added.png", 16);
	ASSERT_EQ_INT(scan_refresh(f->db, f->bases, 0, NULL, &st, NULL), 0);
	ASSERT_EQ_INT(synth_new(NULL, &after), 0);
	ASSERT_EQ_INT(synth_file(after, f->l, "t", SYNTH_ICON_CACHE, &c), 0);
	ASSERT_TRUE(synth_unstored(after)); /* the stored one is stale */
	ASSERT_TRUE(!g_bytes_equal(a, c));
	synth_free(first);
	synth_free(next);
	synth_free(after);
	fixture_free(f);
}

/* GTK's pre-encoded symbolic PNGs: the theme's own, of symbolic names, in
 * Fixed directories, each at its directory's size; under gtk, one at 16 px
 * for every symbolic SVG without its own there, under kde none. */
TEST(symbolic_pngs)
{
	struct fixture *f = fixture_new();
	struct synth *s = NULL, *k = NULL;
	struct lookup *kde = NULL;
	g_autoptr(GPtrArray) list = NULL, own = NULL;

	fixture_themes(f);
	fixture_png(f, "t/16/b-symbolic.symbolic.png", 16);
	fixture_png(f, "t/16/plain.symbolic.png", 16); /* not a symbolic name */
	fixture_png(f, "t/32/c-symbolic.symbolic.png", 32); /* Threshold */
	fixture_write(f, "t/scalable/d-symbolic-rtl.svg", fixture_svg(), -1);
	ASSERT_EQ_INT(fixture_index(f), 0);
	ASSERT_EQ_INT(synth_new(NULL, &s), 0);
	ASSERT_EQ_INT(synth_symbolic_pngs(s, f->l, "t", &list), 0);
	ASSERT_EQ_INT(list->len, 2);
	ASSERT_EQ_STR(list->pdata[0], "16 b-symbolic.symbolic");
	ASSERT_EQ_STR(list->pdata[1], "16 d-symbolic-rtl.symbolic");
	ASSERT_EQ_STR(synth_entry_at(list->pdata[0], 16), "b-symbolic.symbolic");
	ASSERT_TRUE(synth_entry_at(list->pdata[0], 32) == NULL);
	ASSERT_TRUE(synth_entry_at(list->pdata[0], 1) == NULL);

	ASSERT_EQ_INT(lookup_new(f->db, LOOKUP_RULES_KDE, &kde), 0);
	ASSERT_EQ_INT(synth_new(NULL, &k), 0);
	ASSERT_EQ_INT(synth_symbolic_pngs(k, kde, "t", &own), 0);
	ASSERT_EQ_INT(own->len, 1);
	ASSERT_EQ_STR(own->pdata[0], "16 b-symbolic.symbolic");
	synth_free(k);
	lookup_free(kde);
	synth_free(s);
	fixture_free(f);
}

static long long count_of(sqlite3 *db, const char *sql)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;

	if (db_query_row(db, &q, sql, "") < 0)
		return -1;
	return sqlite3_column_int64(q, 0);
}

#define DEFLATED "substr(data, 1, 2) = x'1f8b'"

/* A user's index layered over the machine's keeps its own synthesized
 * files deflated and serves them as they were built; the machine's are
 * stored as they are; a damaged row is built again, not served. */
TEST(deflated_in_a_users_layered_index)
{
	struct fixture *f = fixture_new();
	g_autofree char *machine =
		g_build_filename(f->dir, "machine.sqlite", NULL);
	const char *themes[] = { "t", NULL };
	_cleanup_(sqlite3_closep) sqlite3 *m = NULL;
	_cleanup_(lookup_freep) struct lookup *lm = NULL;
	struct synth *built = NULL, *read = NULL, *damaged = NULL,
		     *at_machine = NULL;
	g_autoptr(GBytes) a = NULL, b = NULL, c = NULL;

	fixture_themes(f);
	ASSERT_EQ_INT(index_open(machine, NULL, f->bases, INDEX_NOT_LAYERED, NULL,
				 &m, NULL),
		      0);
	ASSERT_EQ_INT(lookup_new(m, LOOKUP_RULES_GTK, &lm), 0);
	ASSERT_EQ_INT(synth_new(NULL, &at_machine), 0);
	ASSERT_EQ_INT(synth_store(at_machine, lm, m, themes, -1), 0);
	ASSERT_EQ_INT(count_of(m, "SELECT count(*) FROM synth"), 7);
	ASSERT_EQ_INT(count_of(m, "SELECT count(*) FROM synth WHERE " DEFLATED),
		      0);

	/* the user's index, no longer the machine's copy after a change */
	fixture_png(f, "t/16/added.png", 16);
	ASSERT_EQ_INT(index_open(f->db_path, machine, f->bases, 0, NULL, &f->db,
				 NULL),
		      0);
	ASSERT_TRUE(layered_over_machine(f->db) &&
		    !layered_as_machine(f->db));
	ASSERT_EQ_INT(lookup_new(f->db, LOOKUP_RULES_GTK, &f->l), 0);
	ASSERT_EQ_INT(synth_new(NULL, &built), 0);
	ASSERT_EQ_INT(synth_store(built, f->l, f->db, themes, -1), 0);
	ASSERT_EQ_INT(count_of(f->db, "SELECT count(*) FROM main.synth"), 7);
	/* every file and list that is not empty (the cache, index.theme,
	 * the names at least) */
	ASSERT_TRUE(count_of(f->db, "SELECT count(*) FROM main.synth WHERE " DEFLATED) >=
		    3);
	ASSERT_EQ_INT(count_of(f->db, "SELECT count(*) FROM main.synth WHERE "
				      "length(data) > 0 AND NOT " DEFLATED),
		      0);
	ASSERT_EQ_INT(synth_file(built, f->l, "t", SYNTH_ICON_CACHE, &a), 0);
	ASSERT_TRUE(g_bytes_get_size(a) > 0);

	ASSERT_EQ_INT(synth_new(NULL, &read), 0);
	ASSERT_EQ_INT(synth_file(read, f->l, "t", SYNTH_ICON_CACHE, &b), 0);
	ASSERT_TRUE(g_bytes_equal(a, b));
	ASSERT_TRUE(!synth_unstored(read)); /* read, not built */

	ASSERT_EQ_INT(db_exec(f->db, "UPDATE main.synth SET data = x'1f8b' || "
				     "zeroblob(40) WHERE kind = "
				     "'icon-theme.cache'"),
		      0);
	ASSERT_EQ_INT(synth_new(NULL, &damaged), 0);
	ASSERT_EQ_INT(synth_file(damaged, f->l, "t", SYNTH_ICON_CACHE, &c), 0);
	ASSERT_TRUE(g_bytes_equal(a, c));
	ASSERT_TRUE(synth_unstored(damaged)); /* built again */

	synth_free(built);
	synth_free(read);
	synth_free(damaged);
	synth_free(at_machine);
	fixture_free(f);
}

TEST_MAIN(TEST_CASE(index_theme), TEST_CASE(scaled_views), TEST_CASE(symbolic_pngs),
	  TEST_CASE(cache_and_generation),
	  TEST_CASE(stored_for_the_next_mount),
	  TEST_CASE(deflated_in_a_users_layered_index))
