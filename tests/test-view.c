/* The mounted tree's name grammar (view.h). */
#include <errno.h>
#include <glib.h>

#include "test.h"
#include "view.h"

/* One row per name: what the parser gives (0 with size and scale, or an
 * error). */
struct dir_case {
	const char *name;
	int r, size, scale;
};

static bool dir_cases_hold(int (*parse)(const char *, int *, int *),
			   const struct dir_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int size = 0, scale = 0,
		    r = parse(cases[i].name, &size, &scale);

		if (r != cases[i].r || (r == 0 && (size != cases[i].size ||
						   scale != cases[i].scale))) {
			printf("# '%s': %d %dx%d\n", cases[i].name, r, size,
			       scale);
			return false;
		}
	}
	return true;
}

TEST(flat_dirs)
{
	static const struct dir_case cases[] = {
		{ "48", 0, 48, 1 },
		{ "1024@3", 0, 1024, 3 },
		{ "1", 0, 1, 1 },
		{ "0", -ENOENT },
		{ "1025", -ENOENT },
		{ "048", -ENOENT },
		{ "abc", -ENOENT },
		{ "48@9", -ENOENT },
		{ "48@", -ENOENT },
		/* one canonical name per directory */
		{ "48@1", -ENOENT },
		{ "48@0", -ENOENT },
		{ "-48", -ENOENT },
		{ "99999999999999999999", -ENOENT },
		{ "", -ENOENT },
	};

	ASSERT_TRUE(
		dir_cases_hold(view_parse_flat_dir, cases, ELEMENTSOF(cases)));
}

TEST(theme_dirs)
{
	static const struct dir_case cases[] = {
		{ "48x48", 0, 48, 1 },	{ "16x16@2", 0, 16, 2 },
		{ "16x16@1", -ENOENT }, { "16x16@3", -ENOENT },
		{ "16x32", -ENOENT },	{ "16", -ENOENT },
		{ "0x0", -ENOENT },	{ "2048x2048", -ENOENT },
	};

	ASSERT_TRUE(
		dir_cases_hold(view_parse_theme_dir, cases, ELEMENTSOF(cases)));
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
	/* GTK's directional variants */
	ASSERT_TRUE(view_is_symbolic("go-next-symbolic-rtl"));
	ASSERT_TRUE(view_is_symbolic("go-next-symbolic-ltr"));
	ASSERT_TRUE(!view_is_symbolic("go-next-symbolic-up"));
	ASSERT_TRUE(view_is_symbolic("go-next-symbolic.symbolic"));
	ASSERT_TRUE(view_is_symbolic("go-next-symbolic-rtl.symbolic"));
	ASSERT_TRUE(!view_is_symbolic("go-next.symbolic"));
	ASSERT_EQ_INT(view_nominal_size("go-next-symbolic-rtl"), 16);
	ASSERT_EQ_INT(view_nominal_size("edit-copy-symbolic"), 16);
	ASSERT_EQ_INT(view_nominal_size("edit-copy"), 48);
}

/* Each directory kind's entries, from the grammar alone. */
TEST(entries)
{
	struct view_entry e;

	ASSERT_EQ_INT(view_parse_entry(TREE_ROOT, NULL, 0, 0, "Adwaita",
				       "icons", &e), 0);
	ASSERT_EQ_INT(e.kind, TREE_ICONS);
	view_entry_clear(&e);
	ASSERT_EQ_INT(view_parse_entry(TREE_ROOT, NULL, 0, 0, "Adwaita",
				       "32@2", &e), 0);
	ASSERT_TRUE(e.kind == TREE_FLATDIR && e.size == 32 && e.scale == 2);
	ASSERT_EQ_STR(e.theme, "Adwaita");
	view_entry_clear(&e);
	ASSERT_EQ_INT(view_parse_entry(TREE_THEME, "T", 0, 0, NULL,
				       "icon-theme.cache", &e), 0);
	ASSERT_EQ_INT(e.kind, TREE_ICON_CACHE);
	view_entry_clear(&e);
	ASSERT_EQ_INT(view_parse_entry(TREE_THEME, "T", 0, 0, NULL, "48x48@2",
				       &e), 0);
	ASSERT_TRUE(e.kind == TREE_SIZEDIR && e.size == 48 && e.scale == 2);
	view_entry_clear(&e);
	ASSERT_EQ_INT(view_parse_entry(TREE_SIZEDIR, "T", 48, 2, NULL,
				       "folder.png", &e), 0);
	ASSERT_TRUE(e.kind == TREE_ICON && e.size == 48 && e.scale == 2);
	ASSERT_EQ_STR(e.name, "folder");
	ASSERT_EQ_STR(e.theme, "T");
	view_entry_clear(&e);
	/* symbolic names only as SVG under icons/, any kind in flat views */
	ASSERT_EQ_INT(view_parse_entry(TREE_SIZEDIR, "T", 16, 1, NULL,
				       "go-next-symbolic.png", &e), -ENOENT);
	ASSERT_EQ_INT(view_parse_entry(TREE_FLATDIR, "T", 16, 1, NULL,
				       "go-next-symbolic.png", &e), 0);
	view_entry_clear(&e);
	ASSERT_EQ_INT(view_parse_entry(TREE_SCALABLE, "T", 0, 0, NULL,
				       "x.png", &e), -ENOENT);
	ASSERT_EQ_INT(view_parse_entry(TREE_ICONS, NULL, 0, 0, NULL, "..",
				       &e), -ENOENT);
	ASSERT_EQ_INT(view_parse_entry(TREE_ICON, "T", 0, 0, NULL, "x", &e),
		      -ENOTDIR);
}

TEST_MAIN(TEST_CASE(flat_dirs), TEST_CASE(theme_dirs), TEST_CASE(icon_files),
	  TEST_CASE(symbolic), TEST_CASE(entries))
