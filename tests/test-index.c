/* The index for its users (index.h): opening brings it up to date with the
 * base directories (and with INDEX_PROGRESS counts what it holds), a
 * second open of an unchanged tree reads no directory, a watcher is told of
 * every directory a refresh looks at, and the queries of the mount and
 * `iconfs status` (counts, every name) see valid themes only. "broken" has an index.theme without its
 * group: not a theme, though its root is watched (it may be mended). */
#include <time.h>

#include "fixture.h"
#include "test.h"

static void broken_theme(struct fixture *f)
{
	fixture_write(f, "broken/index.theme", "[Nope]\nName=B\n", -1);
	fixture_png(f, "broken/16/z.png", 16);
}

/* Open the index of `f`'s base directory with `flags` (and `watcher`, may
 * be NULL); 0 or -errno. */
static int open_watched(struct fixture *f, unsigned flags,
			const struct scan_watcher *watcher,
			struct scan_stats *st)
{
	if (f->db)
		sqlite3_close(f->db);
	f->db = NULL;
	return index_open(f->db_path, NULL, f->bases, flags, watcher, &f->db,
			  st);
}

static int open_index(struct fixture *f, unsigned flags, struct scan_stats *st)
{
	return open_watched(f, flags, NULL, st);
}

/* A scan_watcher's callback: each directory into the GPtrArray, a base
 * directory with "=" after it. */
static void keep_dir(const char *dir, bool base, void *userdata)
{
	g_ptr_array_add(userdata, g_strconcat(dir, base ? "=" : "", NULL));
}

TEST(open_and_refresh)
{
	struct fixture *f = fixture_new();
	struct scan_stats st = { 0 };

	fixture_themes(f);
	broken_theme(f);
	ASSERT_EQ_INT(open_index(f, 0, &st), 0);
	ASSERT_TRUE(st.changed);
	ASSERT_EQ_INT(st.problems, 1); /* broken/index.theme */
	/* nothing changed: no directory read; counted on request */
	ASSERT_EQ_INT(open_index(f, INDEX_PROGRESS, &st), 0);
	ASSERT_TRUE(!st.changed);
	ASSERT_EQ_INT(st.dirs_read, 0);
	ASSERT_EQ_INT(st.themes, 3);
	ASSERT_EQ_INT(st.icons, 7);
	/* one file more: its directory is read again */
	fixture_png(f, "t/16/new.png", 16);
	ASSERT_EQ_INT(open_index(f, INDEX_PROGRESS | INDEX_CHECK, &st), 0);
	ASSERT_TRUE(st.changed);
	ASSERT_EQ_INT(st.dirs_read, 1);
	ASSERT_EQ_INT(st.icons, 8);
	/* no stats asked for */
	ASSERT_EQ_INT(open_index(f, 0, NULL), 0);
	fixture_free(f);
}

TEST(stats)
{
	struct fixture *f = fixture_new();
	struct index_stats is = { 0 };
	long long now = (long long)time(NULL);

	fixture_themes(f);
	broken_theme(f);
	ASSERT_EQ_INT(open_index(f, 0, NULL), 0);
	ASSERT_EQ_INT(index_stats(f->db, &is), 0);
	/* t, parent, hicolor; the base directory, 4 roots (broken's too)
	 * and 5 subdirectories; a three times (t/16, t/32, t/scalable),
	 * b-symbolic, c, h, loose */
	ASSERT_EQ_INT(is.themes, 3);
	ASSERT_EQ_INT(is.dirs, 10);
	ASSERT_EQ_INT(is.icons, 7);
	ASSERT_TRUE(is.refreshed >= now - 60 && is.refreshed <= now + 60);
	/* a table gone: an error, not a zero */
	ASSERT_EQ_INT(db_exec(f->db, "DROP TABLE icon"), 0);
	ASSERT_EQ_INT(index_stats(f->db, &is), -EIO);
	fixture_free(f);
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The paths of `dirs`, relative to the base directory, sorted, joined by
 * spaces ("" for the base directory itself). */
static char *relative(struct fixture *f, GPtrArray *dirs)
{
	g_autoptr(GPtrArray) rel = g_ptr_array_new_with_free_func(g_free);
	size_t n = strlen(f->base);

	for (unsigned i = 0; i < dirs->len; i++) {
		const char *p = dirs->pdata[i];

		g_ptr_array_add(
			rel, g_strdup(strncmp(p, f->base, n) == 0 ? p + n : p));
	}
	g_ptr_array_sort(rel, compare_names);
	g_ptr_array_add(rel, NULL);
	return g_strjoinv(" ", (char **)rel->pdata);
}

TEST(dirs_and_names)
{
	struct fixture *f = fixture_new();
	g_autoptr(GPtrArray) dirs = g_ptr_array_new_with_free_func(g_free);
	struct scan_watcher watcher = { keep_dir, dirs };
	g_autoptr(GHashTable) names =
		g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autofree char *rel = NULL, *all = NULL;
	g_autofree const char **keys = NULL;
	guint n = 0;

	fixture_themes(f);
	broken_theme(f);
	/* the watcher is told of every directory a refresh looks at, the
	 * first (a new index) and the next (nothing changed) alike */
	for (int i = 0; i < 2; i++) {
		g_ptr_array_set_size(dirs, 0);
		ASSERT_EQ_INT(open_watched(f, 0, &watcher, NULL), 0);
		g_free(rel);
		rel = relative(f, dirs);
		ASSERT_EQ_STR(rel, "/broken /hicolor /hicolor/64 /parent "
				   "/parent/48 /t /t/16 /t/32 /t/scalable =");
	}
	/* icon names and theme names, not broken's */
	g_hash_table_add(names, g_strdup("kept"));
	ASSERT_EQ_INT(index_all_names(f->db, names), 0);
	keys = (const char **)g_hash_table_get_keys_as_array(names, &n);
	qsort(keys, n, sizeof(*keys), compare_names);
	all = g_strjoinv(" ", (char **)keys);
	ASSERT_EQ_STR(all, "a b-symbolic c h hicolor kept loose parent t");
	fixture_free(f);
}

TEST_MAIN(TEST_CASE(open_and_refresh), TEST_CASE(stats),
	  TEST_CASE(dirs_and_names))
