/* What a mount asks the shared layer to hold (asked.h): nothing without the
 * layer's requests directory (or with one anyone could list or replace);
 * each render as a "PX SOURCE" line of a new file of the mount's, written
 * in batches and at the end, mode 0644; never a file under the user's
 * home, never a line that would read as two; at most ASKED_MAX lines. */
#include <dirent.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <sys/stat.h>

#include "asked.h"
#include "fixture.h"
#include "test.h"

/* A fixture's directory as the layer's: its requests directory made
 * with `mode` (none for -1); *ret_layer gets the layer's path. */
static struct fixture *layer_dir(int mode, char **ret_layer)
{
	struct fixture *f = fixture_new();
	g_autofree char *requests = NULL;

	*ret_layer = g_build_filename(f->dir, "shared.sqlite", NULL);
	requests = asked_dir(*ret_layer);
	if (mode >= 0) {
		g_mkdir(requests, 0700);
		g_chmod(requests, mode);
	}
	return f;
}

/* Every line of every request file, in order of file then line; the
 * number of files in *n_files and whether each was mode 0644. */
static char *all_lines(const char *layer, unsigned *n_files, bool *all_0644)
{
	g_autofree char *requests = asked_dir(layer);
	g_autoptr(GDir) dir = g_dir_open(requests, 0, NULL);
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	GString *out = g_string_new("");
	const char *name;

	*n_files = 0;
	*all_0644 = true;
	while (dir && (name = g_dir_read_name(dir)))
		g_ptr_array_add(names, g_strdup(name));
	g_ptr_array_sort(names, (GCompareFunc)g_strcmp0);
	for (guint i = 0; i < names->len; i++) {
		g_autofree char *path =
			g_build_filename(requests, names->pdata[i], NULL);
		g_autofree char *text = NULL;
		struct stat st;

		if (g_file_get_contents(path, &text, NULL, NULL))
			g_string_append(out, text);
		if (stat(path, &st) < 0 || (st.st_mode & 07777) != 0644)
			*all_0644 = false;
		(*n_files)++;
	}
	return g_string_free(out, FALSE);
}

TEST(nowhere_to_ask)
{
	g_autofree char *none = NULL, *listable = NULL;
	struct fixture *f = layer_dir(-1, &none), *g = layer_dir(0777, &listable);
	struct asked *a = (struct asked *)1;

	ASSERT_EQ_INT(asked_new(NULL, &a), 0);
	ASSERT_TRUE(a == NULL);
	ASSERT_EQ_INT(asked_new(none, &a), 0);
	ASSERT_TRUE(a == NULL);
	/* not the service's sticky directory */
	ASSERT_EQ_INT(asked_new(listable, &a), 0);
	ASSERT_TRUE(a == NULL);
	asked_note(NULL, "/usr/share/icons/x.svg", 16); /* does nothing */
	fixture_free(f);
	fixture_free(g);
}

TEST(renders_asked_for)
{
	g_autofree char *layer = NULL;
	struct fixture *f = layer_dir(01733, &layer);
	g_autofree char *home = g_build_filename(g_get_home_dir(), "x.svg", NULL);
	g_autofree char *lines = NULL;
	struct asked *a = NULL;
	unsigned n;
	bool mode;

	ASSERT_EQ_INT(asked_new(layer, &a), 0);
	ASSERT_TRUE(a != NULL);
	asked_note(a, "/usr/share/icons/hicolor/scalable/apps/a.svg", 24);
	asked_note(a, home, 24);			 /* the user's own */
	asked_note(a, "/usr/share/icons/b\n48 /etc/passwd", 16); /* two lines */
	asked_note(a, "/usr/share/icons/hicolor/48x48/apps/c.png", 32);
	/* nothing written before the batch is full or the mount ends */
	lines = all_lines(layer, &n, &mode);
	ASSERT_EQ_INT(n, 0);
	g_free(lines);
	asked_free(a);
	lines = all_lines(layer, &n, &mode);
	ASSERT_EQ_INT(n, 1);
	ASSERT_TRUE(mode);
	ASSERT_EQ_STR(lines, "24 /usr/share/icons/hicolor/scalable/apps/a.svg\n"
			     "32 /usr/share/icons/hicolor/48x48/apps/c.png\n");
	fixture_free(f);
}

TEST(at_most_asked_max)
{
	g_autofree char *layer = NULL;
	struct fixture *f = layer_dir(01733, &layer);
	g_autofree char *lines = NULL;
	struct asked *a = NULL;
	unsigned n, count = 0;
	bool mode;

	ASSERT_EQ_INT(asked_new(layer, &a), 0);
	for (unsigned i = 0; i < ASKED_MAX + 100; i++) {
		g_autofree char *src =
			g_strdup_printf("/usr/share/icons/t/%u.svg", i);
		asked_note(a, src, 16);
	}
	asked_free(a);
	lines = all_lines(layer, &n, &mode);
	for (const char *p = lines; (p = strchr(p, '\n')); p++)
		count++;
	ASSERT_EQ_INT(count, ASKED_MAX);
	ASSERT_TRUE(n > 1); /* written in batches */
	ASSERT_TRUE(strstr(lines, "16 /usr/share/icons/t/0.svg\n") != NULL);
	ASSERT_TRUE(strstr(lines, "/t/8192.svg") == NULL);
	fixture_free(f);
}

/* The service's side: only icon files of its index at sane sizes, the
 * most asked first (once per file), the files taken away. */
TEST(requests_taken)
{
	g_autofree char *layer = NULL, *requests = NULL, *a = NULL,
			*c = NULL, *one = NULL, *two = NULL;
	struct fixture *f = layer_dir(01733, &layer);
	g_autoptr(GArray) items = NULL;
	g_autoptr(GPtrArray) themes = NULL;
	g_autoptr(GDir) left = NULL;

	fixture_themes(f);
	ASSERT_EQ_INT(fixture_index(f), 0);
	requests = asked_dir(layer);
	a = g_build_filename(f->base, "t", "16", "a.png", NULL);
	c = g_build_filename(f->base, "parent", "48", "c.png", NULL);
	one = g_strdup_printf("24 %s\n24 %s\n32 %s\n16 /etc/passwd\n"
			      "9999 %s\n16 %s/t/16/none.png\nnonsense\ntheme t\n",
			      c, c, a, a, f->base);
	two = g_strdup_printf("24 %s\ntheme parent\ntheme t\ntheme nope\n", c);
	fixture_write(f, "../requests/1000.one", one, -1);
	fixture_write(f, "../requests/1001.two", two, -1);
	items = asked_take(f->db, layer, &themes);
	ASSERT_EQ_INT(items->len, 2);
	ASSERT_EQ_STR(g_array_index(items, struct asked_item, 0).source, c);
	ASSERT_EQ_INT(g_array_index(items, struct asked_item, 0).count, 2);
	ASSERT_EQ_INT(g_array_index(items, struct asked_item, 0).px, 24);
	ASSERT_EQ_STR(g_array_index(items, struct asked_item, 1).source, a);
	ASSERT_EQ_INT(g_array_index(items, struct asked_item, 1).count, 1);
	ASSERT_EQ_INT(g_array_index(items, struct asked_item, 1).ext,
		      ICON_EXT_PNG);
	/* themes of the index only, the most asked first */
	ASSERT_EQ_INT(themes->len, 2);
	ASSERT_EQ_STR(themes->pdata[0], "t");
	ASSERT_EQ_STR(themes->pdata[1], "parent");
	left = g_dir_open(requests, 0, NULL);
	ASSERT_TRUE(left && g_dir_read_name(left) == NULL);
	fixture_free(f);
}

TEST_MAIN(TEST_CASE(nowhere_to_ask), TEST_CASE(renders_asked_for),
	  TEST_CASE(at_most_asked_max), TEST_CASE(requests_taken))
