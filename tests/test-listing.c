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

		if (tree_lookup(c->tree, &c->x, dir_ino, n, &found, &st,
				&timeout) < 0 ||
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

TEST(root)
{
	struct tree_fixture c = { 0 };
	struct listing *ls = NULL;
	g_autofree char *names = NULL;
	uint64_t ino;

	ASSERT_EQ_INT(tree_fixture_setup(&c, NULL), 0);
	ASSERT_EQ_INT(list(&c, "", &ino, &ls), 0);
	names = names_of(ls);
	/* icons/, then each listed size at scale 1, then at scale 2 */
	ASSERT_EQ_STR(names, "icons 16 22 24 32 48 64 96 128 256 512 16@2 "
			     "22@2 24@2 32@2 48@2 64@2 96@2 128@2 256@2 "
			     "512@2");
	ASSERT_EQ_INT(listing_count(ls), 2 + 1 + 2 * view_n_listed_sizes);
	ASSERT_TRUE(dots(ls, TREE_ROOT_INO, TREE_ROOT_INO));
	ASSERT_EQ_INT(first_unlike_lookup(&c, ino, ls), 0);
	listing_free(ls);
	tree_fixture_teardown(&c);
}

TEST(themes_and_theme)
{
	struct tree_fixture c = { 0 };
	struct listing *ls = NULL;
	g_autofree char *names = NULL, *theme = NULL;
	uint64_t icons, t;

	ASSERT_EQ_INT(tree_fixture_setup(&c, NULL), 0);
	ASSERT_EQ_INT(list(&c, "icons", &icons, &ls), 0);
	names = names_of(ls);
	ASSERT_EQ_STR(names, "hicolor parent t");
	ASSERT_TRUE(dots(ls, icons, TREE_ROOT_INO));
	ASSERT_EQ_INT(first_unlike_lookup(&c, icons, ls), 0);
	listing_free(ls);
	/* a theme: its synthesized files, scalable/, then its sizes each at
	 * scales 1 and 2 */
	ASSERT_EQ_INT(list(&c, "icons/t", &t, &ls), 0);
	theme = names_of(ls);
	ASSERT_TRUE(g_str_has_prefix(theme, "index.theme icon-theme.cache "
					    "scalable 16x16 16x16@2 22x22 "
					    "22x22@2 "));
	ASSERT_TRUE(g_str_has_suffix(theme, " 512x512 512x512@2"));
	ASSERT_TRUE(dots(ls, t, icons));
	ASSERT_EQ_INT(first_unlike_lookup(&c, t, ls), 0);
	listing_free(ls);
	tree_fixture_teardown(&c);
}

TEST(icon_views)
{
	struct tree_fixture c = { 0 };
	struct listing *ls = NULL;
	g_autofree char *sized = NULL, *scalable = NULL, *flat = NULL;
	uint64_t ino, t;
	struct stat st;
	double timeout;

	ASSERT_EQ_INT(tree_fixture_setup(&c, NULL), 0);
	ASSERT_EQ_INT(tree_fixture_walk(&c, "icons/t", &t, &st, &timeout), 0);
	/* the theme's icons, its parents' and hicolor's, the unthemed ones;
	 * no symbolic PNG in a size view */
	ASSERT_EQ_INT(list(&c, "icons/t/16x16", &ino, &ls), 0);
	sized = names_of(ls);
	ASSERT_EQ_STR(sized, "a.png c.png h.png loose.png");
	ASSERT_TRUE(dots(ls, ino, t));
	ASSERT_EQ_INT(first_unlike_lookup(&c, ino, ls), 0);
	listing_free(ls);
	ASSERT_EQ_INT(list(&c, "icons/t/scalable", &ino, &ls), 0);
	scalable = names_of(ls);
	ASSERT_EQ_STR(scalable, "a.svg b-symbolic.svg");
	ASSERT_EQ_INT(first_unlike_lookup(&c, ino, ls), 0);
	listing_free(ls);
	/* the flat view of the default theme: symbolic icons as PNG too */
	ASSERT_EQ_INT(list(&c, "48", &ino, &ls), 0);
	flat = names_of(ls);
	ASSERT_EQ_STR(flat, "a.png b-symbolic.png c.png h.png loose.png");
	ASSERT_TRUE(dots(ls, ino, TREE_ROOT_INO));
	ASSERT_EQ_INT(first_unlike_lookup(&c, ino, ls), 0);
	listing_free(ls);
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
