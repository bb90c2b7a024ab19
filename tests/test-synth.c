/* The synthesized files (synth.h): the sizes a theme lists, index.theme as
 * GKeyFile reads it back, icon-theme.cache's header and lists, and one
 * generation that decides what is kept. */
#include <errno.h>

#include "fixture.h"
#include "synth.h"
#include "test.h"

TEST(index_theme)
{
	struct fixture *f = fixture_new();
	struct synth *s = NULL;
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
	ASSERT_EQ_INT(fixture_index(f), 0);
	ASSERT_EQ_INT(synth_new(&s), 0);
	ASSERT_EQ_INT(synth_sizes(f->l, "t", &sizes), 0);
	/* the standard ten and the chain's own: 16 and 64 are standard,
	 * 48 (parent) too: ten in all */
	ASSERT_EQ_INT(sizes->len, 10);
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
	ASSERT_EQ_INT(g_key_file_get_integer(kf, "32x32@2", "Scale", NULL), 2);
	synth_free(s);
	fixture_free(f);
}

TEST(cache_and_generation)
{
	struct fixture *f = fixture_new();
	struct synth *s = NULL;
	g_autoptr(GBytes) a = NULL, b = NULL, c = NULL;
	g_autoptr(GPtrArray) names = NULL, svg = NULL;
	const guint8 *d;

	fixture_themes(f);
	ASSERT_EQ_INT(fixture_index(f), 0);
	ASSERT_EQ_INT(synth_new(&s), 0);
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
	synth_invalidate(s);
	ASSERT_EQ_INT(synth_generation(s), 1);
	ASSERT_EQ_INT(synth_file(s, f->l, "t", SYNTH_ICON_CACHE, &c), 0);
	ASSERT_TRUE(c != a && g_bytes_equal(a, c));
	synth_free(s);
	fixture_free(f);
}

TEST_MAIN(TEST_CASE(index_theme), TEST_CASE(cache_and_generation))
