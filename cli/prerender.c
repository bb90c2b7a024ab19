/* `iconfs render`: fill a blob table ahead of time, at idle priority: the
 * user's own (in the index), or with --shared-db the machine's shared
 * layer, which every mount reads below its own table. The layer is built
 * on a copy beside it and renamed over it when done, so that a reader
 * never sees it half-written; it is world-readable and written by nothing
 * else. One thread per render worker, each with its own connection, takes
 * (name, size, scale) items in turn. Already stored renders are blob hits,
 * so a run after an interrupted one, or after a package update, renders
 * only what is missing or changed. A byte budget stops the rendering
 * cleanly: what was stored stays. */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basedirs.h"
#include "asked.h"
#include "blob.h"
#include "cli.h"
#include "desktop.h"
#include "content.h"
#include "db.h"
#include "index.h"
#include "log.h"
#include "lookup.h"
#include "lookup-chain.h"
#include "render.h"
#include "synth.h"
#include "time-util.h"
#include "view.h"

/* Sizes rendered by default, each at scales 1 and 2, beside those the
 * mount's cache lists a name at, at scale 1: synth_asked_sizes for every
 * name, and each name at the pixel sizes (Size × Scale, up to
 * PRERENDER_OWN_MAX) of its own theme's directories that hold it. GTK and
 * Qt load a window icon at every size its name is listed at: without
 * Papirus's 22x22@2x at 44 px, a new user's first GTK 3 or Qt app started
 * a render worker for its own icon, 20-40 ms later to its window. Every
 * name at every directory's size instead (Adwaita's at hicolor's 36 to
 * 256) grew the machine's layer from 41 to 63 MiB (M4). */
static const int default_sizes[] = { 16, 22, 24, 32, 48, 64 };
#define PRERENDER_OWN_MAX 256

struct px_size {
	int size, scale;
};

/* What --sizes and --scales ask for, read once for every theme. */
struct size_plan {
	GArray *want;	/* sizes (int) */
	GArray *scales; /* (int) */
	bool listed;	/* and the sizes the cache lists each name at, at 1 */
};

struct prerender {
	const struct size_plan *plan;
	const char *db_path;
	enum lookup_rules rules;
	struct content *content;
	long long budget; /* stop once the table holds this many bytes */
	bool tty;

	/* the theme being rendered */
	const char *theme;
	GPtrArray *names;
	GArray *sizes;	   /* struct px_size */
	bool symbolic;	   /* names are rendered as GTK's symbolic encoding */
	atomic_ulong next; /* next item: size index * names + name index */
	atomic_ulong done;

	atomic_ulong failed; /* over all themes */
	atomic_bool full;
};

static int parse_list(const char *s, int min, int max, const char *what,
		      GArray **ret)
{
	g_auto(GStrv) parts = g_strsplit(s, ",", -1);
	g_autoptr(GArray) out = g_array_new(FALSE, FALSE, sizeof(int));

	for (char **p = parts; *p; p++) {
		int v;

		if (cli_parse_int(g_strstrip(*p), min, max, what, &v) < 0)
			return -EINVAL;
		g_array_append_val(out, v);
	}
	*ret = g_steal_pointer(&out);
	return 0;
}

static int px_size_cmp(const void *a, const void *b)
{
	const struct px_size *x = a, *y = b;

	return x->scale != y->scale ? x->scale - y->scale : x->size - y->size;
}

/* Whether `sizes` (struct px_size) holds `s`. */
static bool planned(GArray *sizes, const struct px_size *s)
{
	for (guint i = 0; i < sizes->len; i++)
		if (px_size_cmp(&g_array_index(sizes, struct px_size, i), s) == 0)
			return true;
	return false;
}

static void add_size(GArray *sizes, int size, int scale)
{
	struct px_size s = { size, scale };

	if (!planned(sizes, &s))
		g_array_append_val(sizes, s);
}

/* --sizes at --scales (default 1), or by default the common sizes at
 * --scales (default 1 and 2) and the sizes a theme's names are listed at,
 * at 1. */
static int size_plan_parse(const struct cli_options *o, struct size_plan *ret)
{
	int r;

	*ret = (struct size_plan){ .listed = !o->sizes };
	r = parse_list(o->scales  ? o->scales
		       : o->sizes ? "1"
				  : "1,2",
		       1, 3, "scale", &ret->scales);
	if (r >= 0 && o->sizes)
		r = parse_list(o->sizes, 1, 1024, "size", &ret->want);
	else if (r >= 0) {
		ret->want = g_array_new(FALSE, FALSE, sizeof(int));
		g_array_append_vals(ret->want, default_sizes,
				    ELEMENTSOF(default_sizes));
	}
	return r;
}

static void size_plan_clear(struct size_plan *plan)
{
	if (plan->want)
		g_array_unref(plan->want);
	if (plan->scales)
		g_array_unref(plan->scales);
}

/* The (size, scale) pairs to render every name of a theme at, smallest
 * first, scale 1 first: what is used most comes before a budget stops the
 * run. */
static void plan_sizes(const struct size_plan *plan, GArray **ret)
{
	g_autoptr(GArray) sizes =
		g_array_new(FALSE, FALSE, sizeof(struct px_size));
	const GArray *want = plan->want, *scales = plan->scales;

	for (guint s = 0; s < scales->len; s++)
		for (guint i = 0; i < want->len; i++)
			add_size(sizes, g_array_index(want, int, i),
				 g_array_index(scales, int, s));
	for (unsigned i = 0; plan->listed && i < synth_n_asked_sizes; i++)
		add_size(sizes, synth_asked_sizes[i], 1);
	g_array_sort(sizes, px_size_cmp);
	*ret = g_steal_pointer(&sizes);
}

/* A size beyond the plan, and the names rendered at it (the array is
 * owned, its strings are the theme's list's). */
struct own_size {
	struct px_size size;
	GPtrArray *names;
};

static void own_size_clear(void *p)
{
	g_ptr_array_unref(((struct own_size *)p)->names);
}

static int own_size_cmp(const void *a, const void *b)
{
	return px_size_cmp(&((const struct own_size *)a)->size,
			   &((const struct own_size *)b)->size);
}

/* The entry of `own` (struct own_size) at `s`, added if missing. */
static struct own_size *own_size_at(GArray *own, const struct px_size *s)
{
	struct own_size n = { *s, NULL };

	for (guint i = 0; i < own->len; i++)
		if (px_size_cmp(&g_array_index(own, struct own_size, i).size,
				s) == 0)
			return &g_array_index(own, struct own_size, i);
	n.names = g_ptr_array_new();
	g_array_append_val(own, n);
	return &g_array_index(own, struct own_size, own->len - 1);
}

/* The names of `names` that their own theme's directories hold at a pixel
 * size (lookup_size_px) that `sizes` does not plan at scale 1, by size
 * (struct own_size), smallest first. */
static int own_sizes(struct lookup *l, const char *theme, GPtrArray *names,
		     GArray *sizes, GArray **ret)
{
	g_autoptr(GHashTable) own = NULL;
	g_autoptr(GArray) out = g_array_new(FALSE, FALSE,
					    sizeof(struct own_size));
	int r;

	g_array_set_clear_func(out, own_size_clear);
	r = lookup_name_sizes(l, theme, &own);
	if (r < 0)
		return r;
	for (guint i = 0; i < names->len; i++) {
		GArray *at = g_hash_table_lookup(own, names->pdata[i]);

		for (guint j = 0; at && j < at->len; j++) {
			const struct lookup_size *z =
				&g_array_index(at, struct lookup_size, j);
			struct px_size s = { lookup_size_px(z), 1 };
			struct own_size *e;

			if (s.size == 0 || s.size > PRERENDER_OWN_MAX ||
			    planned(sizes, &s))
				continue;
			e = own_size_at(out, &s);
			/* a name at 22@2 and 44 is rendered at 44 once */
			if (e->names->len == 0 ||
			    e->names->pdata[e->names->len - 1] !=
				    names->pdata[i])
				g_ptr_array_add(e->names, names->pdata[i]);
		}
	}
	g_array_sort(out, own_size_cmp);
	*ret = g_steal_pointer(&out);
	return 0;
}

/* Whether the mount encodes symbolic `name` of `theme` at `size` from an
 * SVG (fs/tree.c): the theme has no pre-encoded file of the name, and GTK
 * draws an SVG for it at that size (*ret_source, *ret_ext). */
static bool symbolic_source(struct lookup *l, const char *theme,
			    const char *name, int size, char **ret_source,
			    int *ret_ext)
{
	g_autofree char *encoded = g_strconcat(name, ".symbolic", NULL);
	g_autofree char *own = NULL;
	int ext;

	if (lookup_icon(l, theme, encoded, size, 1, &own, &ext) == 0)
		return false;
	return lookup_icon(l, theme, name, size, 1, ret_source, ret_ext) == 0 &&
	       *ret_ext == ICON_EXT_SVG;
}

static void *prerender_thread(void *arg)
{
	struct prerender *p = arg;
	_cleanup_(sqlite3_closep) sqlite3 *db = NULL;
	_cleanup_(lookup_freep) struct lookup *l = NULL;
	_cleanup_(blob_reader_freep) struct blob_reader *b = NULL;
	unsigned long total = (unsigned long)p->names->len * p->sizes->len;
	unsigned long i;

	if (index_connect(p->db_path, DB_QUERY_ONLY, 1000, &db) < 0 ||
	    lookup_new(db, p->rules, &l) < 0 ||
	    content_reader_new(p->content, db, &b) < 0)
		return NULL;
	while ((i = atomic_fetch_add(&p->next, 1)) < total) {
		const struct px_size *s = &g_array_index(
			p->sizes, struct px_size, i / p->names->len);
		const char *name = p->names->pdata[i % p->names->len];
		struct icon_content ic = { 0 };
		g_autofree char *src = NULL;
		unsigned long done;
		int ext;

		if (content_stored_bytes(p->content) >= p->budget) {
			atomic_store(&p->full, true);
			break;
		}
		if (p->symbolic ? symbolic_source(l, p->theme, name, s->size,
						  &src, &ext)
				: lookup_icon(l, p->theme, name, s->size,
					      s->scale, &src, &ext) == 0) {
			unsigned px = (unsigned)(s->size * s->scale);

			if (content_resolve(p->content, b, src, ext,
					    p->symbolic ? px | RASTER_SYMBOLIC
							: px,
					    0, &ic) < 0)
				atomic_fetch_add(&p->failed, 1);
		}
		icon_content_clear(&ic);
		done = atomic_fetch_add(&p->done, 1) + 1;
		if (p->tty && (done % 64 == 0 || done == total))
			fprintf(stderr, "\r\033[Krendering %s: %lu/%lu",
				p->theme, done, total);
	}
	return NULL;
}

/* Render `names` of p->theme at `sizes` on every worker. */
static void prerender_items(struct prerender *p, const struct cli_options *o,
			    GPtrArray *names, GArray *sizes, bool symbolic)
{
	pthread_t threads[16];
	int n_threads = o->workers;

	p->names = names;
	p->sizes = sizes;
	p->symbolic = symbolic;
	atomic_store(&p->next, 0);
	atomic_store(&p->done, 0);
	for (int i = 0; i < n_threads; i++)
		if (pthread_create(&threads[i], NULL, prerender_thread, p) != 0)
			n_threads = i;
	for (int i = 0; i < n_threads; i++)
		(void)pthread_join(threads[i], NULL);
	if (p->tty)
		fprintf(stderr, "\r\033[K");
}

/* Under gtk, every symbolic name of `theme` as GTK's encoding at
 * SYNTH_SYMBOLIC_PX when that size is planned, as the mount serves them;
 * then every name that is not symbolic (under icons/ those are served as
 * SVG) at its sizes. The encodings come first: a GTK app's start reads
 * them most, and they are small (Papirus' fill 0.2 MiB), so a budget
 * that the larger sizes reach still holds them. */
static int prerender_theme(struct prerender *p, const struct cli_options *o,
			   struct lookup *l, const char *theme)
{
	g_autoptr(GPtrArray) all = NULL;
	g_autoptr(GPtrArray) names = g_ptr_array_new();
	g_autoptr(GPtrArray) symbolic = g_ptr_array_new();
	g_autoptr(GArray) sizes = NULL, own = NULL;
	g_autoptr(GArray) encoded = g_array_new(FALSE, FALSE,
						sizeof(struct px_size));
	unsigned n_own = 0;
	int r;

	r = lookup_names(l, theme, &all);
	if (r < 0)
		return log_error_errno(r, "cannot list theme '%s': %m", theme);
	plan_sizes(p->plan, &sizes);
	for (guint i = 0; i < all->len; i++)
		if (!view_is_symbolic(all->pdata[i]))
			g_ptr_array_add(names, all->pdata[i]);
		else if (!view_is_symbolic_png(all->pdata[i]))
			g_ptr_array_add(symbolic, all->pdata[i]);
	if (p->plan->listed) {
		r = own_sizes(l, theme, names, sizes, &own);
		if (r < 0)
			return log_error_errno(r, "cannot list theme '%s': %m",
					       theme);
	}
	p->theme = theme;
	add_size(encoded, SYNTH_SYMBOLIC_PX, 1);
	if (p->rules == LOOKUP_RULES_GTK &&
	    planned(sizes, &g_array_index(encoded, struct px_size, 0)))
		prerender_items(p, o, symbolic, encoded, true);
	prerender_items(p, o, names, sizes, false);
	for (guint i = 0; own && i < own->len; i++) {
		struct own_size *e = &g_array_index(own, struct own_size, i);
		g_autoptr(GArray) at =
			g_array_new(FALSE, FALSE, sizeof(struct px_size));

		g_array_append_val(at, e->size);
		prerender_items(p, o, e->names, at, false);
		n_own += e->names->len;
	}
	printf("%s: %u icons at %u sizes, %u more at their own%s\n", theme,
	       names->len, sizes->len, n_own,
	       atomic_load(&p->full) ? ", stopped: the byte budget is reached"
				     : "");
	fflush(stdout);
	return 0;
}

/* The layer's synthesized files of `theme` and of those its toolkit
 * loads beside it, for each desktop's toolkit (lookup_rules_for_desktop):
 * a first login reads its own rules' from the layer, whatever its
 * desktop (a KDE one with Papirus built its own for 0.57 s of CPU before
 * its first answer). */
static void store_synth_every_toolkit(sqlite3 *db, const char *theme)
{
	static const enum lookup_rules toolkits[] = {
		LOOKUP_RULES_GTK, LOOKUP_RULES_KDE, LOOKUP_RULES_QT
	};

	for (size_t i = 0; i < ELEMENTSOF(toolkits); i++)
		(void)cli_store_synth(db, theme, toolkits[i]);
}

/* Render what the machine's users asked for, within the budget. */
static void prerender_asked(struct prerender *p, sqlite3 *db, const char *layer)
{
	g_autoptr(GPtrArray) themes = NULL;
	g_autoptr(GArray) items = asked_take(db, layer, &themes);
	_cleanup_(blob_reader_freep) struct blob_reader *b = NULL;
	unsigned done = 0;

	/* the synthesized files of the themes in use, for every user: by
	 * the service's own rules only (every toolkit's for the nine themes
	 * twenty users asked for grew the layer from 48 to 64 MiB, M4); a
	 * KDE or LXQt first login with one of them builds its own */
	for (guint i = 0; i < themes->len; i++)
		(void)cli_store_synth(db, themes->pdata[i], p->rules);
	if (items->len == 0 || content_reader_new(p->content, db, &b) < 0)
		return;
	for (guint i = 0; i < items->len; i++, done++) {
		const struct asked_item *it =
			&g_array_index(items, struct asked_item, i);
		struct icon_content ic = { 0 };

		if (content_stored_bytes(p->content) >= p->budget) {
			atomic_store(&p->full, true);
			break;
		}
		if (content_resolve(p->content, b, it->source, it->ext, it->px,
				    0, &ic) < 0)
			atomic_fetch_add(&p->failed, 1);
		icon_content_clear(&ic);
	}
	printf("asked for by the machine's users: %u of %u icons%s\n", done,
	       items->len,
	       atomic_load(&p->full) ? ", stopped: the byte budget is reached"
				     : "");
}

/* Run the renders into the index at `db_path` (brought up to date by
 * cli_index first): the shared layer at `layer` (then also what its users
 * asked for), or the user's own table (layer NULL). */
static int prerender_into(const struct cli_options *o,
			  const struct size_plan *plan, const char *db_path,
			  const char *layer)
{
	struct cli_options io = *o;
	_cleanup_(sqlite3_closep) sqlite3 *db = NULL;
	_cleanup_(lookup_freep) struct lookup *l = NULL;
	g_autofree char *mnt = basedirs_default_mountpoint();
	g_autofree char *theme = NULL;
	g_autoptr(GPtrArray) themes = NULL;
	g_auto(GStrv) bases = NULL;
	struct prerender p = { .plan = plan,
			       .db_path = db_path,
			       .rules = o->rules,
			       .budget = o->budget };
	struct content_counters *c;
	int r;

	io.db = (char *)db_path;
	/* the shared layer's index is read from the directories: it is
	 * never layered over the layer it replaces */
	if (layer)
		io.no_shared_db = true;
	r = cli_index(&io, mnt, INDEX_CHECK, NULL, &db, &bases);
	if (r >= 0)
		r = lookup_new(db, o->rules, &l);
	if (r >= 0 && o->all_themes)
		r = lookup_themes(l, &themes);
	else if (r >= 0) {
		theme = desktop_theme(o->theme, NULL);
		themes = g_ptr_array_new_with_free_func(g_free);
		g_ptr_array_add(themes, g_strdup(theme));
	}
	if (r >= 0)
		r = content_new(db_path, NULL, bases, (unsigned)o->workers,
				RENDER_DEADLINE_MS, 1LL << 62, &p.content);
	if (r < 0)
		return r;
	p.tty = isatty(STDERR_FILENO);
	/* the layer's synthesized files of its themes serve every new user
	 * whose index is still the machine's (layered.h) */
	for (guint i = 0; layer && i < themes->len; i++)
		store_synth_every_toolkit(db, themes->pdata[i]);
	for (guint i = 0; i < themes->len && !atomic_load(&p.full); i++)
		if (prerender_theme(&p, o, l, themes->pdata[i]) < 0)
			atomic_fetch_add(&p.failed, 1);
	if (layer) /* the requests are taken (and their place made) always */
		prerender_asked(&p, db, layer);

	/* everything rendered is stored before the command ends */
	if (content_sync(p.content, 60000) < 0)
		log_warning("not every render could be stored in time");
	c = content_counters(p.content);
	printf("%llu rendered, %llu from cache, %llu native, %lu failed, "
	       "%.1f MiB of renders\n",
	       (unsigned long long)(c->renders - c->render_failures),
	       (unsigned long long)c->blob_hits, (unsigned long long)c->native,
	       (unsigned long)p.failed,
	       (double)content_stored_bytes(p.content) / (1 << 20));
	content_free(p.content);
	return p.failed ? -EIO : 0;
}

static int copy_file(const char *from, const char *to)
{
	_cleanup_close_ int in = open(from, O_RDONLY | O_CLOEXEC);
	_cleanup_close_ int out = -1;
	struct stat st;

	if (in < 0)
		return errno == ENOENT ? 0 : -errno;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0 || fstat(in, &st) < 0)
		return -errno;
	for (off_t left = st.st_size; left > 0;) {
		ssize_t n =
			copy_file_range(in, NULL, out, NULL, (size_t)left, 0);
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		left -= n;
	}
	return 0;
}

/* `iconfs render --shared-db FILE`: refresh a copy of the layer beside it
 * (FILE.new, under an exclusive lock on FILE.lock), seal it, rename it over
 * FILE. */
static int prerender_shared(const struct cli_options *o,
			    const struct size_plan *plan)
{
	const char *path = o->shared_db;
	g_autofree char *dir = g_path_get_dirname(path);
	g_autofree char *tmp = g_strconcat(path, ".new", NULL);
	g_autofree char *lock = g_strconcat(path, ".lock", NULL);
	_cleanup_close_ int lock_fd = -1, dir_fd = -1;
	int r;

	if (g_mkdir_with_parents(dir, 0755) < 0)
		return log_error_errno(-errno, "cannot create '%s': %m", dir);
	lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (lock_fd < 0)
		return log_error_errno(-errno, "cannot open '%s': %m", lock);
	if (flock(lock_fd, LOCK_EX | LOCK_NB) < 0)
		return log_error_errno(-errno,
				       "'%s': another render of the shared "
				       "layer is running",
				       path);
	db_unlink(tmp, true);
	r = copy_file(path, tmp);
	if (r < 0)
		return log_error_errno(r, "cannot copy '%s': %m", path);
	r = blob_layer_drop_stale(tmp);
	if (r >= 0)
		r = prerender_into(o, plan, tmp, path);
	if (r < 0 && r != -EIO) {
		db_unlink(tmp, true);
		return r;
	}
	/* failed renders are verdicts in the layer, the rest is good */
	if (blob_layer_seal(tmp) < 0 || rename(tmp, path) < 0) {
		r = log_error_errno(-errno, "cannot install '%s': %m", path);
		db_unlink(tmp, true);
		return r;
	}
	dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir_fd >= 0)
		(void)fsync(dir_fd);
	printf("shared layer '%s' updated\n", path);
	return 0;
}

int cli_prerender(struct cli_options *o)
{
	struct size_plan plan;
	int r;

	r = size_plan_parse(o, &plan);
	if (r >= 0) {
		(void)setpriority(PRIO_PROCESS, 0, 19);
		r = o->shared_db ? prerender_shared(o, &plan)
				 : prerender_into(o, &plan, o->db, NULL);
	}
	size_plan_clear(&plan);
	return r;
}
