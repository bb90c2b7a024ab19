/* Synthesized files and name lists; see synth.h. */
#include <errno.h>
#include <pthread.h>

#include "iconcache.h"
#include "index.h"
#include "synth.h"
#include "view.h"

struct synth {
	pthread_mutex_t lock;
	uint64_t generation; /* lock */
	/* "kind:theme" → struct cached built in `generation`; lock */
	GHashTable *cache;
};

/* A built object with its reference counting (GBytes, GPtrArray). */
struct cached {
	gpointer value;
	gpointer (*ref)(gpointer);
	GDestroyNotify unref;
};

static void cached_free(struct cached *c)
{
	c->unref(c->value);
	g_free(c);
}

int synth_new(struct synth **ret)
{
	struct synth *s = g_new0(struct synth, 1);

	pthread_mutex_init(&s->lock, NULL);
	s->cache = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					 (GDestroyNotify)cached_free);
	*ret = s;
	return 0;
}

struct synth *synth_free(struct synth *s)
{
	if (!s)
		return NULL;
	g_hash_table_destroy(s->cache);
	pthread_mutex_destroy(&s->lock);
	g_free(s);
	return NULL;
}

uint64_t synth_generation(struct synth *s)
{
	uint64_t gen;

	pthread_mutex_lock(&s->lock);
	gen = s->generation;
	pthread_mutex_unlock(&s->lock);
	return gen;
}

void synth_invalidate(struct synth *s)
{
	pthread_mutex_lock(&s->lock);
	s->generation++;
	g_hash_table_remove_all(s->cache);
	pthread_mutex_unlock(&s->lock);
}

typedef int (*build_fn)(struct synth *s, struct lookup *l, const char *theme,
			gpointer *ret);

/* The object `kind` of `theme`: cached, or built and kept when the index
 * did not change meanwhile. */
static int synth_get(struct synth *s, struct lookup *l, const char *kind,
		     const char *theme, build_fn build,
		     gpointer (*ref)(gpointer), GDestroyNotify unref,
		     gpointer *ret)
{
	g_autofree char *key = g_strconcat(kind, ":", theme, NULL);
	struct cached *c;
	gpointer value = NULL;
	uint64_t gen;
	int r;

	pthread_mutex_lock(&s->lock);
	gen = s->generation;
	c = g_hash_table_lookup(s->cache, key);
	if (c)
		value = c->ref(c->value);
	pthread_mutex_unlock(&s->lock);
	if (value) {
		*ret = value;
		return 0;
	}
	r = build(s, l, theme, &value);
	if (r < 0)
		return r;
	pthread_mutex_lock(&s->lock);
	if (s->generation == gen) {
		c = g_new0(struct cached, 1);
		*c = (struct cached){ ref(value), ref, unref };
		g_hash_table_replace(s->cache, g_steal_pointer(&key), c);
	}
	pthread_mutex_unlock(&s->lock);
	*ret = value;
	return 0;
}

static int int_cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int synth_sizes(struct lookup *l, const char *theme, GArray **ret)
{
	GArray *sizes;
	unsigned n = 0;
	int r;

	r = lookup_chain_sizes(l, theme, VIEW_SIZE_MAX, &sizes);
	if (r < 0)
		return r;
	g_array_append_vals(sizes, view_listed_sizes, view_n_listed_sizes);
	g_array_sort(sizes, int_cmp);
	for (unsigned i = 0; i < sizes->len; i++)
		if (n == 0 || g_array_index(sizes, int, i) !=
				      g_array_index(sizes, int, n - 1))
			g_array_index(sizes, int, n++) =
				g_array_index(sizes, int, i);
	g_array_set_size(sizes, n);
	*ret = sizes;
	return 0;
}

static int build_names(struct synth *s, struct lookup *l, const char *theme,
		       gpointer *ret)
{
	GPtrArray *names;
	int r;

	(void)s;
	r = lookup_names(l, theme, &names);
	if (r < 0)
		return r;
	*ret = names;
	return 0;
}

static int build_svg_names(struct synth *s, struct lookup *l, const char *theme,
			   gpointer *ret)
{
	g_autoptr(GPtrArray) all = NULL;
	GPtrArray *names;
	int r;

	r = synth_names(s, l, theme, false, &all);
	if (r < 0)
		return r;
	names = g_ptr_array_new_with_free_func(g_free);
	for (unsigned i = 0; i < all->len; i++) {
		const char *n = all->pdata[i];
		g_autofree char *src = NULL;
		int ext;

		if (lookup_icon(l, theme, n, view_nominal_size(n), 1, &src,
				&ext) == 0 &&
		    ext == ICON_EXT_SVG)
			g_ptr_array_add(names, g_strdup(n));
	}
	*ret = names;
	return 0;
}

int synth_names(struct synth *s, struct lookup *l, const char *theme, bool svg,
		GPtrArray **ret)
{
	return synth_get(s, l, svg ? "svg" : "names", theme,
			 svg ? build_svg_names : build_names,
			 (gpointer(*)(gpointer))g_ptr_array_ref,
			 (GDestroyNotify)g_ptr_array_unref, (gpointer *)ret);
}

/* Written by GKeyFile, so that values from the theme's own file (Name,
 * Comment, Example) are escaped as GKeyFile (and so every toolkit) reads
 * them back: an escaped newline cannot start a group of its own. */
static int build_index_theme(struct synth *s, struct lookup *l,
			     const char *theme, gpointer *ret)
{
	g_autofree char *name = NULL, *comment = NULL, *example = NULL;
	g_autoptr(GKeyFile) kf = g_key_file_new();
	g_autoptr(GArray) sizes = NULL;
	g_autoptr(GPtrArray) dirs = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) scaled = g_ptr_array_new_with_free_func(g_free);
	const char *top = "Icon Theme";
	char *list, *text;
	gsize len;
	int r;

	(void)s;
	r = lookup_theme_info(l, theme, &name, &comment, &example);
	if (r >= 0)
		r = synth_sizes(l, theme, &sizes);
	if (r < 0)
		return r;
	g_key_file_set_string(kf, top, "Name", *name ? name : theme);
	if (*comment)
		g_key_file_set_string(kf, top, "Comment", comment);
	if (*example)
		g_key_file_set_string(kf, top, "Example", example);
	g_key_file_set_string(kf, top, "Inherits", "hicolor");
	for (unsigned i = 0; i < sizes->len; i++) {
		int n = g_array_index(sizes, int, i);

		g_ptr_array_add(dirs, g_strdup_printf("%dx%d", n, n));
		g_ptr_array_add(scaled, g_strdup_printf("%dx%d@2", n, n));
	}
	g_ptr_array_add(dirs, g_strdup("scalable"));
	g_ptr_array_add(dirs, NULL);
	g_ptr_array_add(scaled, NULL);
	/* comma-separated, as the specification writes lists (GKeyFile's
	 * own lists end with a separator) */
	list = g_strjoinv(",", (char **)dirs->pdata);
	g_key_file_set_string(kf, top, "Directories", list);
	g_free(list);
	list = g_strjoinv(",", (char **)scaled->pdata);
	g_key_file_set_string(kf, top, "ScaledDirectories", list);
	g_free(list);
	for (unsigned i = 0; i < sizes->len; i++) {
		int n = g_array_index(sizes, int, i);

		g_key_file_set_integer(kf, dirs->pdata[i], "Size", n);
		g_key_file_set_string(kf, dirs->pdata[i], "Type", "Fixed");
		g_key_file_set_integer(kf, scaled->pdata[i], "Size", n);
		g_key_file_set_integer(kf, scaled->pdata[i], "Scale", 2);
		g_key_file_set_string(kf, scaled->pdata[i], "Type", "Fixed");
	}
	g_key_file_set_integer(kf, "scalable", "Size", 16);
	g_key_file_set_integer(kf, "scalable", "MinSize", 1);
	g_key_file_set_integer(kf, "scalable", "MaxSize", 1024);
	g_key_file_set_string(kf, "scalable", "Type", "Scalable");
	text = g_key_file_to_data(kf, &len, NULL);
	*ret = g_bytes_new_take(text, len);
	return 0;
}

static int build_icon_cache(struct synth *s, struct lookup *l,
			    const char *theme, gpointer *ret)
{
	g_autoptr(GArray) sizes = NULL;
	g_autoptr(GPtrArray) dirs = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) names = NULL, svg = NULL;
	g_autoptr(GPtrArray) png = g_ptr_array_new();
	GByteArray *out;
	int r;

	r = synth_sizes(l, theme, &sizes);
	if (r >= 0)
		r = synth_names(s, l, theme, false, &names);
	if (r >= 0)
		r = synth_names(s, l, theme, true, &svg);
	if (r < 0)
		return r;
	for (unsigned scale = 1; scale <= 2; scale++)
		for (unsigned i = 0; i < sizes->len; i++) {
			int n = g_array_index(sizes, int, i);

			g_ptr_array_add(
				dirs,
				scale == 1 ? g_strdup_printf("%dx%d", n, n)
					   : g_strdup_printf("%dx%d@2", n, n));
		}
	g_ptr_array_add(dirs, g_strdup("scalable"));
	for (unsigned i = 0; i < names->len; i++)
		if (!view_is_symbolic(names->pdata[i]))
			g_ptr_array_add(png, names->pdata[i]);
	out = g_byte_array_new();
	iconcache_build(dirs, png, svg, out);
	*ret = g_byte_array_free_to_bytes(out);
	return 0;
}

int synth_file(struct synth *s, struct lookup *l, const char *theme,
	       enum synth_file which, GBytes **ret)
{
	static const struct {
		const char *kind;
		build_fn build;
	} files[] = {
		[SYNTH_INDEX_THEME] = { "index.theme", build_index_theme },
		[SYNTH_ICON_CACHE] = { "icon-theme.cache", build_icon_cache },
	};

	return synth_get(s, l, files[which].kind, theme, files[which].build,
			 (gpointer(*)(gpointer))g_bytes_ref,
			 (GDestroyNotify)g_bytes_unref, (gpointer *)ret);
}

void synth_warm(struct synth *s, struct lookup *l, const char *const *themes)
{
	for (const char *const *t = themes; *t; t++) {
		g_autoptr(GBytes) cache = NULL, index = NULL;

		(void)synth_file(s, l, *t, SYNTH_ICON_CACHE, &cache);
		(void)synth_file(s, l, *t, SYNTH_INDEX_THEME, &index);
	}
}
