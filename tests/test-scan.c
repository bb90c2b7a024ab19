/* Scan and stamp-driven refresh (scan.h): a fresh index reads every
 * directory, a refresh without changes reads none, a new icon names itself
 * and costs its one directory, an index.theme change marks the themes. */
#include <errno.h>
#include <time.h>

#include "fixture.h"
#include "scan.h"
#include "test.h"

static void later(void)
{
	/* directory mtimes must move past the stored stamp */
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	nanosleep(&ts, NULL);
}

TEST(refresh)
{
	struct fixture *f = fixture_new();
	g_autoptr(GHashTable) names =
		g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	struct scan_changes ch = { .names = names };
	struct scan_stats st;
	g_autofree char *index = NULL;

	fixture_themes(f);
	ASSERT_EQ_INT(fixture_index(f), 0);
	ASSERT_EQ_INT(scan_refresh(f->db, f->bases, SCAN_COUNT, NULL, &st, &ch), 0);
	ASSERT_EQ_INT(st.themes, 3);
	ASSERT_EQ_INT(st.dirs_read, 0);
	ASSERT_TRUE(!st.changed);
	/* t/16/a, t/32/a, t/scalable/a and b-symbolic, parent/48/c,
	 * hicolor/64/h, loose: one row per (directory, name, ext) */
	ASSERT_EQ_INT(st.icons, 7);

	later();
	fixture_png(f, "t/16/fresh.png", 16);
	ASSERT_EQ_INT(scan_refresh(f->db, f->bases, 0, NULL, &st, &ch), 0);
	ASSERT_TRUE(st.changed);
	ASSERT_EQ_INT(st.dirs_read, 1);
	ASSERT_TRUE(g_hash_table_contains(names, "fresh"));
	ASSERT_TRUE(!ch.themes);

	later();
	index = g_build_filename(f->base, "t", "index.theme", NULL);
	fixture_write(
		f, "t/index.theme",
		"[Icon Theme]\nName=Tee\nDirectories=16\n\n[16]\nSize=16\n",
		-1);
	ASSERT_EQ_INT(scan_refresh(f->db, f->bases, 0, NULL, &st, &ch), 0);
	ASSERT_TRUE(ch.themes);
	fixture_free(f);
}

TEST(broken_theme_costs_only_itself)
{
	struct fixture *f = fixture_new();
	struct scan_stats st;

	fixture_themes(f);
	fixture_write(f, "bad/index.theme", "\xff\xfe not a key file [", -1);
	fixture_png(f, "bad/16/x.png", 16);
	ASSERT_EQ_INT(fixture_index(f), 0);
	ASSERT_EQ_INT(scan_refresh(f->db, f->bases, SCAN_COUNT, NULL, &st, NULL), 0);
	ASSERT_EQ_INT(st.themes, 3);
	fixture_free(f);
}

TEST_MAIN(TEST_CASE(refresh), TEST_CASE(broken_theme_costs_only_itself))
