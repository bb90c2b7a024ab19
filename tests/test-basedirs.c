/* "Stays inside the base directories": the one rule (basedirs.h) that the
 * scanner and the content resolution share, with its edge cases. */
#include <errno.h>
#include <unistd.h>

#include "basedirs.h"
#include "fixture.h"
#include "test.h"

TEST(lexical_rule)
{
	ASSERT_EQ_INT(basedirs_path_under("/a/b/c", "/a/b"), 1);
	ASSERT_EQ_INT(basedirs_path_under("/a/b", "/a/b"), 1);
	/* component by component: a shared prefix is not enough */
	ASSERT_EQ_INT(basedirs_path_under("/a/bc", "/a/b"), 0);
	ASSERT_EQ_INT(basedirs_path_under("/a", "/a/b"), 0);
	ASSERT_EQ_INT(basedirs_path_under("/anything", "/"), 1);
}

TEST(real_inside)
{
	struct fixture *f = fixture_new();
	g_autofree char *sibling = g_strconcat(f->base, "2", NULL);
	g_autofree char *late = g_build_filename(f->dir, "late", NULL);
	g_autofree char *file = g_build_filename(f->base, "t/x.png", NULL);
	g_autofree char *out_link = g_build_filename(f->base, "out.png", NULL);
	g_autofree char *in_link = g_build_filename(f->base, "in.png", NULL);
	g_autofree char *sib_file = g_build_filename(sibling, "y.png", NULL);
	g_autofree char *late_file = g_build_filename(late, "z.png", NULL);
	char *bases[] = { f->base, late, NULL };
	struct basedirs_real *b = basedirs_real_new(bases);
	char *r;

	fixture_write(f, "t/x.png", "x", 1);
	g_mkdir_with_parents(sibling, 0755);
	g_file_set_contents(sib_file, "y", 1, NULL);
	ASSERT_EQ_INT(symlink(sib_file, out_link), 0);
	ASSERT_EQ_INT(symlink(file, in_link), 0);

	r = basedirs_real_inside(b, file, false);
	ASSERT_TRUE(r && g_str_has_suffix(r, "/icons/t/x.png"));
	free(r);
	r = basedirs_real_inside(b, in_link, false);
	ASSERT_TRUE(r && g_str_has_suffix(r, "/icons/t/x.png"));
	free(r);
	/* a link out of the base directories, to a sibling sharing its
	 * prefix ("icons2" beside "icons") */
	ASSERT_TRUE(basedirs_real_inside(b, out_link, false) == NULL);
	ASSERT_TRUE(basedirs_real_inside(b, sib_file, false) == NULL);
	/* the base directory itself: a directory, never a file */
	ASSERT_TRUE(basedirs_real_inside(b, f->base, false) == NULL);
	r = basedirs_real_inside(b, f->base, true);
	ASSERT_TRUE(r != NULL);
	free(r);
	ASSERT_TRUE(basedirs_real_inside(b, "/nonexistent/x.png", false) ==
		    NULL);
	/* a base directory that appears later is found then */
	g_mkdir_with_parents(late, 0755);
	g_file_set_contents(late_file, "z", 1, NULL);
	r = basedirs_real_inside(b, late_file, false);
	ASSERT_TRUE(r && g_str_has_suffix(r, "/late/z.png"));
	free(r);
	basedirs_real_free(b);
	fixture_free(f);
}

TEST_MAIN(TEST_CASE(lexical_rule), TEST_CASE(real_inside))
