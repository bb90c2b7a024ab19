/* What a mount asks the shared layer to hold; see asked.h. */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "asked.h"
#include "log.h"

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

void asked_note(struct asked *a, const char *source, unsigned px)
{
	g_autoptr(GString) full = NULL;

	if (!a || g_str_has_prefix(source, a->home) || strchr(source, '\n'))
		return;
	pthread_mutex_lock(&a->lock);
	if (a->total < ASKED_MAX) {
		a->total++;
		g_string_append_printf(a->lines, "%u %s\n", px, source);
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
