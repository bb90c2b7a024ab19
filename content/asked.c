/* What a mount asks the shared layer to hold; see asked.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "asked.h"
#include "index.h"
#include "log.h"
#include "macro.h"

/* Lines kept before they are written as one request file. */
#define ASKED_BATCH 256

struct asked {
	char *dir;
	char *home; /* with a trailing '/': renders under it are not asked */
	pthread_mutex_t lock;
	GString *lines;	 /* not written yet; lock */
	unsigned n_lines; /* in `lines`; lock */
	unsigned total;	 /* noted in all; lock */
};

char *asked_dir(const char *layer)
{
	g_autofree char *dir = g_path_get_dirname(layer);

	return g_build_filename(dir, "requests", NULL);
}

int asked_new(const char *layer, struct asked **ret)
{
	struct asked *a;
	struct stat st;
	g_autofree char *dir = NULL;

	*ret = NULL;
	if (!layer)
		return 0;
	dir = asked_dir(layer);
	/* the service's directory that anyone may add to, or nothing */
	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    !(st.st_mode & S_ISVTX) || access(dir, W_OK | X_OK) < 0)
		return 0;
	a = g_new0(struct asked, 1);
	a->dir = g_steal_pointer(&dir);
	a->home = g_strconcat(g_get_home_dir(), "/", NULL);
	a->lines = g_string_new(NULL);
	pthread_mutex_init(&a->lock, NULL);
	*ret = a;
	return 0;
}

/* Write `lines` as a new request file (mode 0644: the service reads it in
 * its own user namespace, where the file's owner is nobody). */
static void asked_write(struct asked *a, const GString *lines)
{
	g_autofree char *path =
		g_strdup_printf("%s/%u.XXXXXX", a->dir, (unsigned)getuid());
	int fd = g_mkstemp_full(path, O_WRONLY | O_CLOEXEC, 0644);
	ssize_t n;

	if (fd < 0) {
		log_debug("cannot ask the shared layer (%s): %s", a->dir,
			  g_strerror(errno));
		return;
	}
	(void)fchmod(fd, 0644);
	n = write(fd, lines->str, lines->len);
	if (n != (ssize_t)lines->len)
		(void)unlink(path);
	(void)close(fd);
}

/* Add one line (without its newline) to the next request file. */
static void asked_line(struct asked *a, const char *line)
{
	g_autoptr(GString) full = NULL;

	pthread_mutex_lock(&a->lock);
	if (a->total < ASKED_MAX) {
		a->total++;
		g_string_append_printf(a->lines, "%s\n", line);
		if (++a->n_lines >= ASKED_BATCH) {
			full = a->lines;
			a->lines = g_string_new(NULL);
			a->n_lines = 0;
		}
	}
	pthread_mutex_unlock(&a->lock);
	if (full)
		asked_write(a, full);
}

void asked_note(struct asked *a, const char *source, unsigned px)
{
	g_autofree char *line = NULL;

	if (!a || g_str_has_prefix(source, a->home) || strchr(source, '\n'))
		return;
	line = g_strdup_printf("%u %s", px, source);
	asked_line(a, line);
}

void asked_note_theme(struct asked *a, const char *theme)
{
	g_autofree char *line = NULL;

	if (!a || strchr(theme, '\n'))
		return;
	line = g_strconcat("theme ", theme, NULL);
	asked_line(a, line);
}

static bool px_parse(const char *s, unsigned *ret)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > ASKED_PX_MAX)
		return false;
	*ret = (unsigned)v;
	return true;
}

static void asked_item_clear(void *p)
{
	g_free(((struct asked_item *)p)->source);
}

static int asked_item_cmp(const void *a, const void *b)
{
	const struct asked_item *x = a, *y = b;

	return x->count != y->count ? (y->count > x->count ? 1 : -1)
				    : strcmp(x->source, y->source);
}

/* The lines of one request file of `dir_fd` (at most 1 MiB), counted
 * once per file into `counts` ("PX SOURCE" → count). */
static void asked_read(int dir_fd, const char *name, GHashTable *counts)
{
	_cleanup_close_ int fd = openat(dir_fd, name,
					O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
						O_CLOEXEC);
	g_autoptr(GHashTable) seen =
		g_hash_table_new(g_str_hash, g_str_equal);
	g_autofree char *text = NULL;
	struct stat st;
	ssize_t n;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_size > 1 << 20)
		return;
	text = g_malloc((size_t)st.st_size + 1);
	n = read(fd, text, (size_t)st.st_size);
	if (n < 0)
		return;
	text[n] = '\0';
	for (char *line = text, *next; *line; line = next) {
		gpointer old;

		next = strchrnul(line, '\n');
		if (*next)
			*next++ = '\0';
		if (g_hash_table_contains(seen, line))
			continue;
		g_hash_table_add(seen, line);
		old = g_hash_table_lookup(counts, line);
		g_hash_table_insert(counts, g_strdup(line),
				    GUINT_TO_POINTER(GPOINTER_TO_UINT(old) + 1));
	}
}

/* "theme THEME" lines of `counts`, themes of the index, the most asked
 * first. */
static GPtrArray *asked_themes(sqlite3 *db, GHashTable *counts)
{
	g_autoptr(GArray) items = g_array_new(FALSE, FALSE, sizeof(struct asked_item));
	GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
	GHashTableIter it;
	const char *line;
	gpointer count;

	g_hash_table_iter_init(&it, counts);
	while (g_hash_table_iter_next(&it, (gpointer *)&line, &count)) {
		struct asked_item item = { .count = GPOINTER_TO_UINT(count) };

		if (!g_str_has_prefix(line, "theme ") ||
		    !index_theme_valid(db, line + 6))
			continue;
		item.source = (char *)line + 6;
		g_array_append_val(items, item);
	}
	g_array_sort(items, asked_item_cmp);
	for (guint i = 0; i < items->len && i < ASKED_THEMES_MAX; i++)
		g_ptr_array_add(out, g_strdup(g_array_index(items,
							    struct asked_item,
							    i).source));
	return out;
}

GArray *asked_take(sqlite3 *db, const char *layer, GPtrArray **ret_themes)
{
	g_autofree char *dir = asked_dir(layer);
	g_autoptr(GHashTable) counts =
		g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	GArray *items = g_array_new(FALSE, FALSE, sizeof(struct asked_item));
	_cleanup_closedir_ DIR *d = NULL;
	GHashTableIter it;
	const char *line;
	gpointer count;
	struct dirent *de;
	struct stat st;
	int fd;

	g_array_set_clear_func(items, asked_item_clear);
	if (mkdir(dir, 01733) == 0)
		(void)chmod(dir, 01733); /* the umask took the sticky bit */
	/* only the service's own directory, never one placed there */
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, &st) < 0 || st.st_uid != geteuid()))
		(void)close(fd);
	else if (fd >= 0)
		d = fdopendir(fd);
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.') {
			asked_read(dirfd(d), de->d_name, counts);
			(void)unlinkat(dirfd(d), de->d_name, 0);
		}
	g_hash_table_iter_init(&it, counts);
	while (g_hash_table_iter_next(&it, (gpointer *)&line, &count)) {
		struct asked_item item = { .count = GPOINTER_TO_UINT(count) };
		const char *space = strchr(line, ' ');
		g_autofree char *px_text =
			space ? g_strndup(line, space - line) : NULL;
		unsigned px;

		if (!space || !px_parse(px_text, &px))
			continue;
		item.px = px;
		item.ext = index_icon_file(db, space + 1);
		if (item.ext < 0)
			continue; /* not an icon of the system's directories */
		item.source = g_strdup(space + 1);
		g_array_append_val(items, item);
	}
	g_array_sort(items, asked_item_cmp);
	*ret_themes = asked_themes(db, counts);
	return items;
}

struct asked *asked_free(struct asked *a)
{
	if (!a)
		return NULL;
	if (a->n_lines)
		asked_write(a, a->lines);
	g_string_free(a->lines, TRUE);
	pthread_mutex_destroy(&a->lock);
	g_free(a->dir);
	g_free(a->home);
	g_free(a);
	return NULL;
}
