/* The specification's lookup (lookup.h) on a fixture: exact and threshold
 * matches, the closest size, inheritance, hicolor, the unthemed fallback,
 * names that never resolve, and the name lists. (Every rule on its own
 * fixture: tests/test_conformance.py.) */
#include <errno.h>

#include "fixture.h"
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

TEST(lists)
{
	struct fixture *f = fixture_new();
	g_autoptr(GPtrArray) names = NULL, themes = NULL;
	g_autoptr(GArray) sizes = NULL;
	g_autofree char *name = NULL, *comment = NULL, *example = NULL;

	fixture_themes(f);
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

TEST_MAIN(TEST_CASE(resolve), TEST_CASE(lists))
