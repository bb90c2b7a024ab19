/* Directory listings (listing.h): what each kind of directory lists, in
 * which order, with which d_type, and the inode number a lookup of each
 * entry then gives (the kernel trusts a listing's d_ino, `find` and `ls -i`
 * compare them). Under GTK's rules a size view lists no symbolic PNG (GTK
 * asks for those as SVG under icons/), a flat view does. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>

#include "listing.h"
#include "test.h"
#include "tree-fixture.h"

/* The listing of the directory at `path` ("" for the root). */
static int list(struct tree_fixture *c, const char *path, uint64_t *ret_ino,
		struct listing **ret)
{
	struct stat st;
	double timeout;
	uint64_t ino = TREE_ROOT_INO;
	int r = 0;

	if (*path)
		r = tree_fixture_walk(c, path, &ino, &st, &timeout);
	*ret_ino = ino;
	return r < 0 ? r : listing_build(c->tree, &c->x, NULL, ino, ret);
}

/* The listing's names after "." and "..", joined by spaces. */
static char *names_of(const struct listing *ls)
{
	GString *s = g_string_new(NULL);
	char buf[NAME_MAX + 1];

	for (unsigned i = 2; i < listing_count(ls); i++) {
		unsigned char type;
		uint64_t ino;

		g_string_append_printf(s, "%s%s", i > 2 ? " " : "",
				       listing_entry(ls, i, buf, &type, &ino));
	}
	return g_string_free(s, FALSE);
}

/* 0 when every entry of the listing of `dir_ino` after "." and ".." is
 * found by a lookup in it with the inode number and the file type the
 * listing gave; else the index of the first that is not, plus one. */
static unsigned first_unlike_lookup(struct tree_fixture *c, uint64_t dir_ino,
				    const struct listing *ls)
{
	char buf[NAME_MAX + 1];

	for (unsigned i = 2; i < listing_count(ls); i++) {
		unsigned char type;
		uint64_t ino, found = 0;
		const char *n = listing_entry(ls, i, buf, &type, &ino);
		struct stat st;
		double timeout;

		if (tree_lookup(c->tree, &c->x, REQUEST_RENDER, dir_ino, n,
				&found, &st, &timeout) < 0 ||
		    found != ino || st.st_ino != ino ||
		    (type == DT_DIR) != S_ISDIR(st.st_mode) ||
		    (type == DT_REG) != S_ISREG(st.st_mode))
			return i + 1;
	}
	return 0;
}

/* ".", then "..", with their inode numbers */
static bool dots(const struct listing *ls, uint64_t self, uint64_t parent)
{
	char buf[NAME_MAX + 1];
	unsigned char t0, t1;
	uint64_t i0, i1;
	const char *n0 = listing_entry(ls, 0, buf, &t0, &i0);
	const char *n1 = listing_entry(ls, 1, buf, &t1, &i1);

	return streq(n0, ".") && streq(n1, "..") && t0 == DT_DIR &&
	       t1 == DT_DIR && i0 == self && i1 == parent;
}

/* What is wrong with the listing of `path` (its parent's path `parent`):
 * "" when it lists `want` (its names after "." and "..", joined by
 * spaces), "." and ".." carry their inode numbers, and every entry is
 * found by its lookup with its inode number and file type (g_free). */
static char *listing_problem(struct tree_fixture *c, const char *path,
			     const char *parent, const char *want)
{
	struct listing *ls = NULL;
	g_autofree char *names = NULL;
	uint64_t ino, parent_ino;
	char *problem;
	unsigned bad;

	if (list(c, parent, &parent_ino, &ls) < 0)
		return g_strdup("the parent does not list");
	listing_free(ls);
	if (list(c, path, &ino, &ls) < 0)
		return g_strdup("it does not list");
	names = names_of(ls);
	bad = first_unlike_lookup(c, ino, ls);
	if (!streq(names, want))
		problem = g_strdup_printf("it lists \"%s\"", names);
	else if (!dots(ls, ino, parent_ino))
		problem = g_strdup("its . or .. is wrong");
	else if (bad)
		problem = g_strdup_printf("entry %u is not what its lookup "
					  "finds",
					  bad - 1);
	else
		problem = g_strdup("");
	listing_free(ls);
	return problem;
}

TEST(root)
{
	struct tree_fixture c = { 0 };
	g_autofree char *problem = NULL;

	ASSERT_EQ_INT(tree_fixture_setup(&c, NULL), 0);
	/* icons/, then each listed size at scale 1, then at scale 2 (the
	 * root is its own parent) */
	problem = listing_problem(&c, "", "",
				  "icons 16 22 24 32 48 64 96 128 256 512 "
				  "16@2 22@2 24@2 32@2 48@2 64@2 96@2 128@2 "
				  "256@2 512@2");
	ASSERT_EQ_STR(problem, "");
	ASSERT_EQ_INT(view_n_listed_sizes, 10);
	tree_fixture_teardown(&c);
}

TEST(themes_and_theme)
{
	struct tree_fixture c = { 0 };
	g_autofree char *icons = NULL, *theme = NULL;

	ASSERT_EQ_INT(tree_fixture_setup(&c, NULL), 0);
	icons = listing_problem(&c, "icons", "", "hicolor parent t");
	ASSERT_EQ_STR(icons, "");
	/* a theme: its synthesized files, scalable/, then its sizes (the
	 * standard ones and its chain's directories') at scales 1 and 2 */
	theme = listing_problem(
		&c, "icons/t", "icons",
		"index.theme icon-theme.cache scalable 16x16 16x16@2 22x22 "
		"22x22@2 24x24 24x24@2 32x32 32x32@2 44x44 44x44@2 48x48 "
		"48x48@2 64x64 64x64@2 96x96 96x96@2 128x128 128x128@2 "
		"192x192 192x192@2 256x256 256x256@2 512x512 512x512@2");
	ASSERT_EQ_STR(theme, "");
	tree_fixture_teardown(&c);
}

TEST(icon_views)
{
	struct tree_fixture c = { 0 };
	g_autofree char *sized = NULL, *scalable = NULL, *flat = NULL;

	ASSERT_EQ_INT(tree_fixture_setup(&c, NULL), 0);
	/* the theme's icons, its parents' and hicolor's, the unthemed ones;
	 * a symbolic SVG as GTK's pre-encoded PNG at 16 px only, never as
	 * NAME.png */
	sized = listing_problem(&c, "icons/t/16x16", "icons/t",
				"a.png c.png h.png loose.png "
				"b-symbolic.symbolic.png");
	ASSERT_EQ_STR(sized, "");
	g_free(sized);
	sized = listing_problem(&c, "icons/t/22x22", "icons/t",
				"a.png c.png h.png loose.png");
	ASSERT_EQ_STR(sized, "");
	scalable = listing_problem(&c, "icons/t/scalable", "icons/t",
				   "a.svg b-symbolic.svg");
	ASSERT_EQ_STR(scalable, "");
	/* the flat view of the default theme: symbolic icons as PNG too */
	flat = listing_problem(&c, "48", "",
			       "a.png b-symbolic.png c.png h.png loose.png");
	ASSERT_EQ_STR(flat, "");
	tree_fixture_teardown(&c);
}

TEST(not_a_directory)
{
	struct tree_fixture c = { 0 };
	struct listing *ls = NULL;
	uint64_t ino;

	ASSERT_EQ_INT(tree_fixture_setup(&c, NULL), 0);
	ASSERT_EQ_INT(list(&c, "icons/t/index.theme", &ino, &ls), -ENOTDIR);
	ASSERT_EQ_INT(list(&c, "icons/t/16x16/a.png", &ino, &ls), -ENOTDIR);
	/* a node the kernel forgot */
	ASSERT_EQ_INT(listing_build(c.tree, &c.x, NULL, 12345, &ls), -ESTALE);
	ASSERT_TRUE(ls == NULL);
	tree_fixture_teardown(&c);
}

TEST_MAIN(TEST_CASE(root), TEST_CASE(themes_and_theme), TEST_CASE(icon_views),
	  TEST_CASE(not_a_directory))
