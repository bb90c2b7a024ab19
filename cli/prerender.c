/* `iconfs render`: fill the blob table ahead of time, for install-time or
 * login-time warm-up, at idle priority. One thread per render worker, each
 * with its own connection, takes (name, size) items in turn. Already
 * stored renders are blob hits, so an interrupted run resumes where it
 * stopped. */
#include <errno.h>
#include <glib.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include "basedirs.h"
#include "cli.h"
#include "desktop.h"
#include "content.h"
#include "db.h"
#include "log.h"
#include "lookup.h"
#include "render.h"
#include "view.h"

struct prerender {
	const char *db_path;
	const char *theme;
	struct content *content;
	GPtrArray *names;
	GArray *sizes;
	atomic_ulong next; /* next item: size index * names + name index */
	atomic_ulong done, failed;
	bool tty;
};

static int parse_sizes(const char *s, GArray **ret)
{
	g_auto(GStrv) parts = g_strsplit(s ? s : "16,24,32,48", ",", -1);
	GArray *sizes = g_array_new(FALSE, FALSE, sizeof(int));

	for (char **p = parts; *p; p++) {
		int size, scale;

		if (view_parse_flat_dir(g_strstrip(*p), &size, &scale) < 0 ||
		    scale != 1) {
			g_array_unref(sizes);
			return log_error_errno(
				-EINVAL, "invalid size '%s' (1 to 1024)", *p);
		}
		g_array_append_val(sizes, size);
	}
	*ret = sizes;
	return 0;
}

static void *prerender_thread(void *arg)
{
	struct prerender *p = arg;
	_cleanup_(sqlite3_closep) sqlite3 *db = NULL;
	_cleanup_(lookup_freep) struct lookup *l = NULL;
	_cleanup_(blob_reader_freep) struct blob_reader *b = NULL;
	unsigned long total = (unsigned long)p->names->len * p->sizes->len;
	unsigned long i;

	if (db_connect(p->db_path, DB_QUERY_ONLY, 1000, &db) < 0 ||
	    lookup_new(db, &l) < 0 || blob_reader_new(db, &b) < 0)
		return NULL;
	while ((i = atomic_fetch_add(&p->next, 1)) < total) {
		int size = g_array_index(p->sizes, int, i / p->names->len);
		const char *name = p->names->pdata[i % p->names->len];
		struct icon_content ic = { 0 };
		g_autofree char *src = NULL;
		unsigned long done;
		int ext;

		if (lookup_icon(l, p->theme, name, size, 1, &src, &ext) == 0 &&
		    content_resolve(p->content, b, src, ext, (unsigned)size,
				    false, &ic) < 0)
			atomic_fetch_add(&p->failed, 1);
		icon_content_clear(&ic);
		done = atomic_fetch_add(&p->done, 1) + 1;
		if (p->tty && (done % 64 == 0 || done == total))
			fprintf(stderr, "\r\033[Krendering %s: %lu/%lu",
				p->theme, done, total);
	}
	return NULL;
}

int cli_prerender(struct cli_options *o)
{
	_cleanup_(sqlite3_closep) sqlite3 *db = NULL;
	_cleanup_(lookup_freep) struct lookup *l = NULL;
	g_autofree char *mnt = basedirs_default_mountpoint();
	g_autofree char *theme = desktop_theme(o->theme, NULL);
	g_autoptr(GPtrArray) names = NULL;
	g_autoptr(GArray) sizes = NULL;
	g_auto(GStrv) bases = NULL;
	struct prerender p = { .db_path = o->db, .theme = theme };
	pthread_t threads[16];
	struct content_counters *c;
	int n_threads = o->workers, r;

	r = parse_sizes(o->sizes, &sizes);
	if (r < 0)
		return r;
	(void)setpriority(PRIO_PROCESS, 0, 19);
	r = cli_index(o, mnt, INDEX_CHECK, &db, &bases);
	if (r >= 0)
		r = lookup_new(db, &l);
	if (r >= 0)
		r = lookup_names(l, theme, &names);
	if (r >= 0)
		r = content_new(o->db, bases, (unsigned)o->workers,
				RENDER_DEADLINE_MS, 1LL << 62, &p.content);
	if (r < 0)
		return r;
	p.names = names;
	p.sizes = sizes;
	p.tty = isatty(STDERR_FILENO);

	for (int i = 0; i < n_threads; i++)
		if (pthread_create(&threads[i], NULL, prerender_thread, &p) !=
		    0)
			n_threads = i;
	for (int i = 0; i < n_threads; i++)
		(void)pthread_join(threads[i], NULL);
	if (p.tty)
		fprintf(stderr, "\r\033[K");

	/* everything rendered is stored before the command ends */
	if (content_sync(p.content, 60000) < 0)
		log_warning("not every render could be stored in time");
	c = content_counters(p.content);
	printf("%s: %u icons at %u sizes, %llu rendered, %llu from cache, "
	       "%llu native, %lu failed\n",
	       theme, names->len, sizes->len,
	       (unsigned long long)(c->renders - c->render_failures),
	       (unsigned long long)c->blob_hits, (unsigned long long)c->native,
	       (unsigned long)p.failed);
	content_free(p.content);
	return p.failed ? -EIO : 0;
}
