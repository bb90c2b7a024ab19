/* index.theme parsing: defaults, leniency and the rules of theme.h. */
#include <glib.h>

#include "test.h"
#include "theme.h"

static struct theme_info *parse(const char *text)
{
	struct theme_info *info = NULL;
	if (theme_info_parse(text, strlen(text), "test", &info) < 0)
		return NULL;
	return info;
}

/* A subdirectory as the specification's defaults and rules make it. */
static bool subdir_is(const struct theme_subdir *d, const char *path, int type,
		      int scale, int min_size, int max_size)
{
	bool ok = streq(d->path, path) && (int)d->type == type &&
		  d->scale == scale && d->min_size == min_size &&
		  d->max_size == max_size;

	if (!ok)
		printf("# '%s': type %d scale %d %d..%d\n", d->path,
		       (int)d->type, d->scale, d->min_size, d->max_size);
	return ok;
}

TEST(defaults)
{
	struct theme_info *t = parse("[Icon Theme]\nName=T\nDirectories=a\n"
				     "[a]\nSize=32\n");
	ASSERT_TRUE(t);
	ASSERT_EQ_INT(t->n_subdirs, 1);
	ASSERT_TRUE(
		subdir_is(&t->subdirs[0], "a", THEME_DIR_THRESHOLD, 1, 32, 32));
	ASSERT_EQ_INT(t->subdirs[0].threshold, 2);
	theme_info_free(t);
}

TEST(types_and_order)
{
	struct theme_info *t =
		parse("[Icon Theme]\nDirectories=b,a\nScaledDirectories=c@2\n"
		      "[a]\nSize=16\nType=Fixed\n[b]\nSize=48\nType=Scalable\n"
		      "MinSize=8\nMaxSize=512\n[c@2]\nSize=16\nScale=2\n"
		      "Type=Bogus\n");
	ASSERT_TRUE(t);
	ASSERT_EQ_INT(t->n_subdirs, 3);
	ASSERT_TRUE(
		subdir_is(&t->subdirs[0], "b", THEME_DIR_SCALABLE, 1, 8, 512));
	ASSERT_TRUE(subdir_is(&t->subdirs[1], "a", THEME_DIR_FIXED, 1, 16, 16));
	/* an unknown Type is Threshold */
	ASSERT_TRUE(subdir_is(&t->subdirs[2], "c@2", THEME_DIR_THRESHOLD, 2, 16,
			      16));
	theme_info_free(t);
}

TEST(skipped_dirs)
{
	struct theme_info *t = parse(
		"[Icon Theme]\nDirectories=nogroup,nosize,../up,/abs,ok,ok\n"
		"[nosize]\nType=Fixed\n[../up]\nSize=1\n[/abs]\nSize=1\n"
		"[ok]\nSize=x\n");
	ASSERT_TRUE(t);
	/* "ok" has an invalid Size: skipped too */
	ASSERT_EQ_INT(t->n_subdirs, 0);
	theme_info_free(t);
}

TEST(lenient)
{
	struct theme_info *t =
		parse("\xef\xbb\xbf# comment\r\n[Icon Theme]\r\nName=L\r\n"
		      "Name[de]=Ld\r\njunk line\r\n"
		      "Inherits= a , ,b,\r\nDirectories=d1, d2 ,\r\n"
		      "[d1]\r\nSize=16\r\n[d2]\r\nSize=22 \r\n[d1]\r\n"
		      "Type=Fixed\r\nComment=\xff\xfe bad utf8\r\n");
	ASSERT_TRUE(t);
	ASSERT_EQ_STR(t->name, "L");
	ASSERT_EQ_INT(g_strv_length(t->inherits), 2);
	ASSERT_EQ_STR(t->inherits[0], "a");
	ASSERT_EQ_STR(t->inherits[1], "b");
	ASSERT_EQ_INT(t->n_subdirs, 2);
	ASSERT_EQ_INT(t->subdirs[0].type, THEME_DIR_FIXED);
	ASSERT_EQ_INT(t->subdirs[1].size, 22);
	theme_info_free(t);
}

TEST(not_a_theme)
{
	ASSERT_TRUE(parse("") == NULL);
	ASSERT_TRUE(parse("\x01\x02garbage") == NULL);
	ASSERT_TRUE(parse("[Other]\nName=x\n") == NULL);
}

TEST(huge_line)
{
	GString *s = g_string_new("[Icon Theme]\nName=");
	struct theme_info *t;

	for (int i = 0; i < 1 << 20; i++)
		g_string_append_c(s, 'x');
	g_string_append(s, "\nDirectories=a\n[a]\nSize=16\n");
	t = parse(s->str);
	g_string_free(s, TRUE);
	ASSERT_TRUE(t);
	ASSERT_EQ_INT(strlen(t->name), 1 << 20);
	ASSERT_EQ_INT(t->n_subdirs, 1);
	theme_info_free(t);
}

TEST(subdir_paths)
{
	ASSERT_EQ_INT(theme_subdir_path_valid("16x16/apps"), 1);
	ASSERT_EQ_INT(theme_subdir_path_valid("a/../b"), 0);
	ASSERT_EQ_INT(theme_subdir_path_valid("/etc"), 0);
	ASSERT_EQ_INT(theme_subdir_path_valid("a//b"), 0);
	ASSERT_EQ_INT(theme_subdir_path_valid(""), 0);
}

TEST_MAIN(TEST_CASE(defaults), TEST_CASE(types_and_order),
	  TEST_CASE(skipped_dirs), TEST_CASE(lenient), TEST_CASE(not_a_theme),
	  TEST_CASE(huge_line), TEST_CASE(subdir_paths))
