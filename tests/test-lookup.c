/* The lookup (lookup.h) on a fixture: exact and threshold matches, the
 * closest size, inheritance, hicolor, the unthemed fallback, names that
 * never resolve, the name lists, and where the toolkits' rules part
 * (GTK 4, KIconThemes, Qt: the cases their sources decide differently).
 * (Every specification rule on its own fixture: tests/test_conformance.py;
 * the real toolkits against the mount: tests/test_fidelity.py.) */
#include <errno.h>

#include "fixture.h"
#include "lookup-chain.h"
#include "scan.h"
#include "test.h"

static char *resolve(struct fixture *f, const char *name, int size, int scale)
{
	char *path = NULL;
	int ext;

	if (lookup_icon(f->l, "t", name, size, scale, &path, &ext) < 0)
		return NULL;
	return path;
}

static bool ends(char *path, const char *suffix)
{
	bool r = path && g_str_has_suffix(path, suffix);

	g_free(path);
	return r;
}

TEST(resolve)
{
	struct fixture *f = fixture_new();

	fixture_themes(f);
	ASSERT_EQ_INT(fixture_index(f), 0);
	ASSERT_TRUE(ends(resolve(f, "a", 16, 1), "/t/16/a.png"));
	/* Threshold 32 ± 2 matches 30..34; Scalable 8..512 matches too, but
	 * subdirectories are tried in file order */
	ASSERT_TRUE(ends(resolve(f, "a", 33, 1), "/t/32/a.png"));
	ASSERT_TRUE(ends(resolve(f, "a", 100, 1), "/t/scalable/a.svg"));
	/* nothing matches 600: the closest directory wins */
	ASSERT_TRUE(ends(resolve(f, "a", 600, 1), "/t/scalable/a.svg"));
	ASSERT_TRUE(ends(resolve(f, "c", 16, 1), "/parent/48/c.png"));
	ASSERT_TRUE(ends(resolve(f, "h", 16, 1), "/hicolor/64/h.png"));
	ASSERT_TRUE(ends(resolve(f, "loose", 16, 1), "/icons/loose.png"));
	ASSERT_TRUE(resolve(f, "missing", 16, 1) == NULL);
	ASSERT_TRUE(resolve(f, "A", 16, 1) == NULL); /* case-sensitive */
	ASSERT_TRUE(resolve(f, "..", 16, 1) == NULL);
	ASSERT_TRUE(resolve(f, "t/a", 16, 1) == NULL);
	ASSERT_TRUE(resolve(f, "", 16, 1) == NULL);
	fixture_free(f);
}

/* A name's files are read once and kept (with the themes' directories)
 * until lookup_flush(), which the mount calls at every change of the
 * index: a name looked up before a file of it came is then found. And
 * they are kept for one name only: another name's files are its own. */
TEST(name_kept_until_flush)
{
	struct fixture *f = fixture_new();
	struct scan_stats st;

	fixture_themes(f);
	ASSERT_EQ_INT(fixture_index(f), 0);
	ASSERT_TRUE(resolve(f, "new", 16, 1) == NULL);
	ASSERT_TRUE(ends(resolve(f, "a", 16, 1), "/t/16/a.png"));
	ASSERT_TRUE(ends(resolve(f, "c", 16, 1), "/parent/48/c.png"));
	fixture_png(f, "t/16/new.png", 16);
	ASSERT_EQ_INT(scan_refresh(f->db, f->bases, 0, NULL, &st, NULL), 0);
	lookup_flush(f->l);
	ASSERT_TRUE(ends(resolve(f, "new", 16, 1), "/t/16/new.png"));
	ASSERT_TRUE(ends(resolve(f, "new", 48, 1), "/t/16/new.png"));
	ASSERT_TRUE(ends(resolve(f, "a", 33, 1), "/t/32/a.png"));
	fixture_free(f);
}

static int size_cmp(gconstpointer a, gconstpointer b)
{
	const struct lookup_size *x = a, *y = b;

	return x->size != y->size ? x->size - y->size : x->scale - y->scale;
}

/* lookup_name_sizes' sizes of `name`, sorted, space-separated, "@2" after
 * a Scale=2 one (a string of a table the test frees: kept in a static
 * buffer). */
static const char *own_sizes(GHashTable *own, const char *name)
{
	static char buf[64];
	GArray *a = g_hash_table_lookup(own, name);
	g_autoptr(GString) out = g_string_new(NULL);

	if (!a)
		return "(none)";
	g_array_sort(a, size_cmp);
	for (guint i = 0; i < a->len; i++) {
		const struct lookup_size *z =
			&g_array_index(a, struct lookup_size, i);

		g_string_append_printf(out, "%s%d%s", i ? " " : "", z->size,
				       z->scale == 2 ? "@2" : "");
	}
	g_strlcpy(buf, out->str, sizeof buf);
	return buf;
}

TEST(lists)
{
	struct fixture *f = fixture_new();
	g_autoptr(GPtrArray) names = NULL, themes = NULL;
	g_autoptr(GArray) sizes = NULL;
	g_autoptr(GHashTable) own = NULL;
	g_autofree char *name = NULL, *comment = NULL, *example = NULL;

	fixture_themes(f);
	/* a in the parent too: the sizes are t's, the theme toolkits take
	 * it from */
	fixture_png(f, "parent/48/a.png", 48);
	ASSERT_EQ_INT(fixture_index(f), 0);
	ASSERT_EQ_INT(lookup_names(f->l, "t", &names), 0);
	ASSERT_EQ_INT(names->len, 5);
	ASSERT_EQ_STR(names->pdata[0], "a");
	ASSERT_EQ_STR(names->pdata[1], "b-symbolic");
	ASSERT_EQ_STR(names->pdata[2], "c");
	ASSERT_EQ_STR(names->pdata[3], "h");
	ASSERT_EQ_STR(names->pdata[4], "loose");
	ASSERT_EQ_INT(lookup_chain_sizes(f->l, "t", 1024, &sizes), 0);
	ASSERT_EQ_INT(sizes->len, 4); /* 16, 32, 48 (parent), 64 (hicolor) */
	ASSERT_EQ_INT(lookup_name_sizes(f->l, "t", &own), 0);
	ASSERT_EQ_STR(own_sizes(own, "a"), "16 32");
	ASSERT_EQ_STR(own_sizes(own, "b-symbolic"), ""); /* Scalable only */
	ASSERT_EQ_STR(own_sizes(own, "c"), "48");
	ASSERT_EQ_STR(own_sizes(own, "h"), "64");
	ASSERT_TRUE(!g_hash_table_contains(own, "loose")); /* unthemed */
	ASSERT_EQ_INT(lookup_themes(f->l, &themes), 0);
	ASSERT_EQ_INT(themes->len, 3);
	ASSERT_EQ_INT(lookup_theme_info(f->l, "t", &name, &comment, &example),
		      0);
	ASSERT_EQ_STR(name, "Tee");
	ASSERT_EQ_STR(comment, "A theme");
	ASSERT_EQ_INT(
		lookup_theme_info(f->l, "nope", &name, &comment, &example),
		-ENOENT);
	fixture_free(f);
}

/* One theme whose directories part the toolkits: d in 16 and 48; e in
 * two groups of size 16 (Fixed and Threshold); k an svg at 24 and a png
 * at 48; l at 24 only in a directory of Context=Legacy, and at 48; ab
 * at 48; o at 64 and 128, as far from 96. */
static void rules_theme(struct fixture *f)
{
	static const struct {
		const char *path;
		int px;
	} pngs[] = {
		{ "r/16/d.png", 16 },	  { "r/48/d.png", 48 },
		{ "r/16/e.png", 16 },	  { "r/16t/e.png", 16 },
		{ "r/48/k.png", 48 },	  { "r/legacy/l.png", 24 },
		{ "r/48/l.png", 48 },	  { "r/48/ab.png", 48 },
		{ "r/64/o.png", 64 },	  { "r/128/o.png", 128 },
	};

	fixture_write(f, "r/index.theme",
		      "[Icon Theme]\nName=R\nDirectories=16,16t,24,48,legacy,64,128\n\n"
		      "[16]\nSize=16\nType=Fixed\nContext=Actions\n\n"
		      "[16t]\nSize=16\nType=Threshold\nContext=Actions\n\n"
		      "[24]\nSize=24\nType=Fixed\nContext=Places\n\n"
		      "[48]\nSize=48\nType=Fixed\nContext=Places\n\n"
		      "[legacy]\nSize=24\nType=Fixed\nContext=Legacy\n\n"
		      "[64]\nSize=64\nType=Fixed\n\n[128]\nSize=128\nType=Fixed\n",
		      -1);
	for (size_t i = 0; i < G_N_ELEMENTS(pngs); i++)
		fixture_png(f, pngs[i].path, pngs[i].px);
	fixture_write(f, "r/24/k.svg", fixture_svg(), -1);
}

static bool picks(struct fixture *f, const char *name, int size,
		  const char *suffix)
{
	char *path = NULL;
	int ext;

	if (lookup_icon(f->l, "r", name, size, 1, &path, &ext) < 0)
		return false;
	return ends(path, suffix);
}

TEST(rules)
{
	struct fixture *f = fixture_new();

	rules_theme(f);
	f->rules = LOOKUP_RULES_GTK;
	ASSERT_EQ_INT(fixture_index(f), 0);
	ASSERT_TRUE(picks(f, "d", 24, "/r/48/d.png")); /* scales down */
	ASSERT_TRUE(picks(f, "e", 16, "/r/16t/e.png")); /* the later group */
	ASSERT_TRUE(picks(f, "k", 24, "/r/24/k.svg"));
	ASSERT_TRUE(picks(f, "l", 24, "/r/legacy/l.png"));
	ASSERT_TRUE(!picks(f, "ab-cd-x-ef", 24, ""));
	ASSERT_TRUE(picks(f, "o", 96, "/r/128/o.png"));

	f->rules = LOOKUP_RULES_KDE;
	ASSERT_EQ_INT(fixture_index(f), 0);
	ASSERT_TRUE(picks(f, "d", 24, "/r/48/d.png"));
	ASSERT_TRUE(picks(f, "e", 16, "/r/16/e.png")); /* the first exact */
	ASSERT_TRUE(picks(f, "k", 24, "/r/48/k.png")); /* png before svg */
	ASSERT_TRUE(picks(f, "l", 24, "/r/48/l.png")); /* Legacy skipped */
	/* the name's less specific names in the theme (the file of "d") */
	ASSERT_TRUE(picks(f, "ab-cd-x-ef", 24, "/r/48/ab.png"));
	ASSERT_TRUE(!picks(f, "d-more", 24, "")); /* "d" is too short */
	ASSERT_TRUE(picks(f, "o", 96, "/r/128/o.png"));

	f->rules = LOOKUP_RULES_QT;
	ASSERT_EQ_INT(fixture_index(f), 0);
	ASSERT_TRUE(picks(f, "d", 24, "/r/16/d.png")); /* the nearest */
	ASSERT_TRUE(picks(f, "e", 16, "/r/16/e.png"));
	ASSERT_TRUE(picks(f, "k", 24, "/r/24/k.svg"));
	ASSERT_TRUE(picks(f, "l", 24, "/r/legacy/l.png"));
	ASSERT_TRUE(picks(f, "o", 96, "/r/64/o.png")); /* the first nearest */

	/* the specification as written: the first of the nearest in order */
	f->rules = LOOKUP_RULES_SPEC;
	ASSERT_EQ_INT(fixture_index(f), 0);
	ASSERT_TRUE(picks(f, "d", 24, "/r/16/d.png"));
	ASSERT_TRUE(picks(f, "o", 96, "/r/64/o.png"));
	fixture_free(f);
}

TEST(rules_names)
{
	ASSERT_EQ_INT(lookup_rules_for_desktop(NULL), LOOKUP_RULES_GTK);
	ASSERT_EQ_INT(lookup_rules_for_desktop("GNOME"), LOOKUP_RULES_GTK);
	ASSERT_EQ_INT(lookup_rules_for_desktop("KDE"), LOOKUP_RULES_KDE);
	ASSERT_EQ_INT(lookup_rules_for_desktop("ubuntu:KDE"), LOOKUP_RULES_KDE);
	ASSERT_EQ_INT(lookup_rules_for_desktop("LXQt"), LOOKUP_RULES_QT);
	ASSERT_EQ_INT(lookup_rules_for_desktop("XFCE"), LOOKUP_RULES_GTK);
	ASSERT_EQ_INT(lookup_rules_from_name("kde"), LOOKUP_RULES_KDE);
	ASSERT_EQ_INT(lookup_rules_from_name("GTK"), -EINVAL);
	ASSERT_EQ_STR(lookup_rules_name(LOOKUP_RULES_QT), "qt");
	ASSERT_EQ_INT(lookup_rules_from_name("spec"), LOOKUP_RULES_SPEC);
}

TEST_MAIN(TEST_CASE(resolve), TEST_CASE(name_kept_until_flush),
	  TEST_CASE(lists), TEST_CASE(rules), TEST_CASE(rules_names))
