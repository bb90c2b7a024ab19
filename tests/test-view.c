/* The mounted tree's name grammar (view.h). */
#include <errno.h>
#include <glib.h>

#include "test.h"
#include "view.h"

TEST(flat_dirs)
{
	int size, scale;

	ASSERT_EQ_INT(view_parse_flat_dir("48", &size, &scale), 0);
	ASSERT_EQ_INT(size, 48);
	ASSERT_EQ_INT(scale, 1);
	ASSERT_EQ_INT(view_parse_flat_dir("1024@3", &size, &scale), 0);
	ASSERT_EQ_INT(size, 1024);
	ASSERT_EQ_INT(scale, 3);
	ASSERT_EQ_INT(view_parse_flat_dir("1", &size, &scale), 0);
	ASSERT_EQ_INT(view_parse_flat_dir("0", &size, &scale), -ENOENT);
	ASSERT_EQ_INT(view_parse_flat_dir("1025", &size, &scale), -ENOENT);
	ASSERT_EQ_INT(view_parse_flat_dir("048", &size, &scale), -ENOENT);
	ASSERT_EQ_INT(view_parse_flat_dir("abc", &size, &scale), -ENOENT);
	ASSERT_EQ_INT(view_parse_flat_dir("48@9", &size, &scale), -ENOENT);
	ASSERT_EQ_INT(view_parse_flat_dir("48@", &size, &scale), -ENOENT);
	/* one canonical name per directory */
	ASSERT_EQ_INT(view_parse_flat_dir("48@1", &size, &scale), -ENOENT);
	ASSERT_EQ_INT(view_parse_flat_dir("48@0", &size, &scale), -ENOENT);
	ASSERT_EQ_INT(view_parse_flat_dir("-48", &size, &scale), -ENOENT);
	ASSERT_EQ_INT(
		view_parse_flat_dir("99999999999999999999", &size, &scale),
		-ENOENT);
	ASSERT_EQ_INT(view_parse_flat_dir("", &size, &scale), -ENOENT);
}

TEST(theme_dirs)
{
	int size, scale;

	ASSERT_EQ_INT(view_parse_theme_dir("48x48", &size, &scale), 0);
	ASSERT_EQ_INT(size, 48);
	ASSERT_EQ_INT(scale, 1);
	ASSERT_EQ_INT(view_parse_theme_dir("16x16@2", &size, &scale), 0);
	ASSERT_EQ_INT(scale, 2);
	ASSERT_EQ_INT(view_parse_theme_dir("16x16@1", &size, &scale), -ENOENT);
	ASSERT_EQ_INT(view_parse_theme_dir("16x16@3", &size, &scale), -ENOENT);
	ASSERT_EQ_INT(view_parse_theme_dir("16x32", &size, &scale), -ENOENT);
	ASSERT_EQ_INT(view_parse_theme_dir("16", &size, &scale), -ENOENT);
	ASSERT_EQ_INT(view_parse_theme_dir("0x0", &size, &scale), -ENOENT);
	ASSERT_EQ_INT(view_parse_theme_dir("2048x2048", &size, &scale),
		      -ENOENT);
}

TEST(icon_files)
{
	char long_name[300];
	char *name = NULL;

	ASSERT_EQ_INT(view_parse_icon_file("firefox.png", "png", &name), 0);
	ASSERT_EQ_STR(name, "firefox");
	g_free(name);
	ASSERT_EQ_INT(view_parse_icon_file("a.b.png", "png", &name), 0);
	ASSERT_EQ_STR(name, "a.b");
	g_free(name);
	ASSERT_EQ_INT(view_parse_icon_file("firefox.svg", "png", &name),
		      -ENOENT);
	ASSERT_EQ_INT(view_parse_icon_file(".png", "png", &name), -ENOENT);
	ASSERT_EQ_INT(view_parse_icon_file("..png", "png", &name), -ENOENT);
	ASSERT_EQ_INT(view_parse_icon_file("...png", "png", &name), -ENOENT);
	ASSERT_EQ_INT(view_parse_icon_file("png", "png", &name), -ENOENT);
	memset(long_name, 'a', sizeof(long_name));
	strcpy(long_name + 260, ".png");
	ASSERT_EQ_INT(view_parse_icon_file(long_name, "png", &name),
		      -ENAMETOOLONG);
}

TEST(symbolic)
{
	ASSERT_TRUE(view_is_symbolic("edit-copy-symbolic"));
	ASSERT_TRUE(!view_is_symbolic("edit-copy"));
	ASSERT_TRUE(!view_is_symbolic("edit-symbolic-copy"));
	ASSERT_EQ_INT(view_nominal_size("edit-copy-symbolic"), 16);
	ASSERT_EQ_INT(view_nominal_size("edit-copy"), 48);
}

TEST_MAIN(TEST_CASE(flat_dirs), TEST_CASE(theme_dirs), TEST_CASE(icon_files),
	  TEST_CASE(symbolic))
