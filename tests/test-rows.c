/* The rows' enums (rows.h): the extensions stored as icon.ext, in the
 * specification's order of preference, and nothing else. */
#include "rows.h"
#include "test.h"

TEST(ext_names)
{
	/* stored in the index: the numbers must not change */
	ASSERT_EQ_INT(ICON_EXT_PNG, 0);
	ASSERT_EQ_INT(ICON_EXT_SVG, 1);
	ASSERT_EQ_INT(ICON_EXT_XPM, 2);
	ASSERT_EQ_INT(icon_ext_from_name("png"), ICON_EXT_PNG);
	ASSERT_EQ_INT(icon_ext_from_name("svg"), ICON_EXT_SVG);
	ASSERT_EQ_INT(icon_ext_from_name("xpm"), ICON_EXT_XPM);
	ASSERT_EQ_STR(icon_ext_name(ICON_EXT_PNG), "png");
	ASSERT_EQ_STR(icon_ext_name(ICON_EXT_SVG), "svg");
	ASSERT_EQ_STR(icon_ext_name(ICON_EXT_XPM), "xpm");
}

TEST(other_extensions)
{
	/* exactly these three: no other case, prefix or longer name */
	ASSERT_EQ_INT(icon_ext_from_name(""), -1);
	ASSERT_EQ_INT(icon_ext_from_name("PNG"), -1);
	ASSERT_EQ_INT(icon_ext_from_name("pn"), -1);
	ASSERT_EQ_INT(icon_ext_from_name("pngx"), -1);
	ASSERT_EQ_INT(icon_ext_from_name("svgz"), -1);
	ASSERT_EQ_INT(icon_ext_from_name("theme"), -1);
	/* a number out of range names nothing */
	ASSERT_EQ_STR(icon_ext_name(-1), "");
	ASSERT_EQ_STR(icon_ext_name(3), "");
	ASSERT_EQ_STR(icon_ext_name(1000), "");
}

TEST(dir_kinds)
{
	/* stored as dir.kind */
	ASSERT_EQ_INT(DIR_KIND_BASE, 0);
	ASSERT_EQ_INT(DIR_KIND_ROOT, 1);
	ASSERT_EQ_INT(DIR_KIND_SUBDIR, 2);
}

TEST_MAIN(TEST_CASE(ext_names), TEST_CASE(other_extensions),
	  TEST_CASE(dir_kinds))
