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
#include "test.h"

struct dir {
	char *root;  /* the layer's directory */
	char *layer; /* root/shared.sqlite (need not exist) */
	char *requests;
};

static struct dir *dir_new(int requests_mode)
{
	struct dir *d = g_new0(struct dir, 1);

	d->root = g_dir_make_tmp("iconfs-asked-XXXXXX", NULL);
	d->layer = g_build_filename(d->root, "shared.sqlite", NULL);
	d->requests = asked_dir(d->layer);
	if (requests_mode >= 0) {
		g_mkdir(d->requests, 0700);
		g_chmod(d->requests, requests_mode);
	}
	return d;
}

static void dir_free(struct dir *d)
{
	char *argv[] = { "rm", "-rf", d->root, NULL };

	g_spawn_sync(NULL, argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL,
		     NULL, NULL, NULL);
	g_free(d->root);
	g_free(d->layer);
	g_free(d->requests);
	g_free(d);
}

/* Every line of every request file, in order of file then line; the
 * number of files in *n_files and whether each was mode 0644. */
static char *all_lines(struct dir *d, unsigned *n_files, bool *all_0644)
{
	g_autoptr(GDir) dir = g_dir_open(d->requests, 0, NULL);
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
			g_build_filename(d->requests, names->pdata[i], NULL);
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
	struct dir *none = dir_new(-1), *listable = dir_new(0777);
	struct asked *a = (struct asked *)1;

	ASSERT_EQ_INT(asked_new(NULL, &a), 0);
	ASSERT_TRUE(a == NULL);
	ASSERT_EQ_INT(asked_new(none->layer, &a), 0);
	ASSERT_TRUE(a == NULL);
	/* not the service's sticky directory */
	ASSERT_EQ_INT(asked_new(listable->layer, &a), 0);
	ASSERT_TRUE(a == NULL);
	asked_note(NULL, "/usr/share/icons/x.svg", 16); /* does nothing */
	dir_free(none);
	dir_free(listable);
}

TEST(renders_asked_for)
{
	struct dir *d = dir_new(01733);
	g_autofree char *home = g_build_filename(g_get_home_dir(), "x.svg", NULL);
	g_autofree char *lines = NULL;
	struct asked *a = NULL;
	unsigned n;
	bool mode;

	ASSERT_EQ_INT(asked_new(d->layer, &a), 0);
	ASSERT_TRUE(a != NULL);
	asked_note(a, "/usr/share/icons/hicolor/scalable/apps/a.svg", 24);
	asked_note(a, home, 24);			 /* the user's own */
	asked_note(a, "/usr/share/icons/b\n48 /etc/passwd", 16); /* two lines */
	asked_note(a, "/usr/share/icons/hicolor/48x48/apps/c.png", 32);
	/* nothing written before the batch is full or the mount ends */
	lines = all_lines(d, &n, &mode);
	ASSERT_EQ_INT(n, 0);
	g_free(lines);
	asked_free(a);
	lines = all_lines(d, &n, &mode);
	ASSERT_EQ_INT(n, 1);
	ASSERT_TRUE(mode);
	ASSERT_EQ_STR(lines, "24 /usr/share/icons/hicolor/scalable/apps/a.svg\n"
			     "32 /usr/share/icons/hicolor/48x48/apps/c.png\n");
	dir_free(d);
}

TEST(at_most_asked_max)
{
	struct dir *d = dir_new(01733);
	g_autofree char *lines = NULL;
	struct asked *a = NULL;
	unsigned n, count = 0;
	bool mode;

	ASSERT_EQ_INT(asked_new(d->layer, &a), 0);
	for (unsigned i = 0; i < ASKED_MAX + 100; i++) {
		g_autofree char *src =
			g_strdup_printf("/usr/share/icons/t/%u.svg", i);
		asked_note(a, src, 16);
	}
	asked_free(a);
	lines = all_lines(d, &n, &mode);
	for (const char *p = lines; (p = strchr(p, '\n')); p++)
		count++;
	ASSERT_EQ_INT(count, ASKED_MAX);
	ASSERT_TRUE(n > 1); /* written in batches */
	ASSERT_TRUE(strstr(lines, "16 /usr/share/icons/t/0.svg\n") != NULL);
	ASSERT_TRUE(strstr(lines, "/t/8192.svg") == NULL);
	dir_free(d);
}

TEST_MAIN(TEST_CASE(nowhere_to_ask), TEST_CASE(renders_asked_for),
	  TEST_CASE(at_most_asked_max))
