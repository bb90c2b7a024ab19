/* Synthesized files and name lists; see synth.h. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "iconcache.h"
#include "index.h"
#include "lookup-chain.h"
#include "synth.h"
#include "theme.h"
#include "time-util.h"
#include "view.h"

/* Which rules built a stored file: this version, and the format of what
 * is synthesized (bumped whenever the files' content changes for the same
 * index: 2 the symbolic rule, 4 hicolor's directories of GTK's built-in
 * icons, 5 pre-encoded symbolic PNGs in size views, 6 the toolkits' rules,
 * 7 per-size symbolic SVGs and KDE's SVGs in size views, 8 Qt's SVGs
 * there too, 9 no @2 directories under gtk, 10 the cache's names at
 * their own and the asked sizes only, 11 its values aligned). */
#define SYNTH_FORMAT  "11"

/* What a stored row says made it: this version and format, and the rules
 * of the lookup that built it (the files differ per toolkit). */
static const char *made_by(struct lookup *l)
{
	static const char *const by[_LOOKUP_RULES_MAX] = {
		[LOOKUP_RULES_GTK] = ICONFS_VERSION "/" SYNTH_FORMAT "/gtk",
		[LOOKUP_RULES_KDE] = ICONFS_VERSION "/" SYNTH_FORMAT "/kde",
		[LOOKUP_RULES_QT] = ICONFS_VERSION "/" SYNTH_FORMAT "/qt",
		[LOOKUP_RULES_SPEC] = ICONFS_VERSION "/" SYNTH_FORMAT "/spec",
	};

	return by[lookup_rules(l)];
}

struct synth {
	pthread_mutex_t lock;
	struct generation own; /* when none is given */
	struct generation *gen;
	/* "kind:theme" → struct cached built in the generation; lock */
	GHashTable *cache;
	/* themes built here that the index does not hold yet; lock */
	GHashTable *unstored;
};

typedef int (*build_fn)(struct synth *s, struct lookup *l, const char *theme,
			gpointer *ret);

/* One kind of object: how it is built, counted and stored in the index. */
struct kind {
	const char *name;
	build_fn build;
	gpointer (*ref)(gpointer);
	GDestroyNotify unref;
	GBytes *(*pack)(gpointer value);
	gpointer (*unpack)(GBytes *data);
};

struct cached {
	gpointer value;
	const struct kind *kind;
};

static void cached_free(struct cached *c)
{
	c->kind->unref(c->value);
	g_free(c);
}

int synth_new(struct generation *gen, struct synth **ret)
{
	struct synth *s = g_new0(struct synth, 1);

	s->gen = gen ? gen : &s->own;
	pthread_mutex_init(&s->lock, NULL);
	s->cache = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					 (GDestroyNotify)cached_free);
	s->unstored =
		g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	*ret = s;
	return 0;
}

struct synth *synth_free(struct synth *s)
{
	if (!s)
		return NULL;
	g_hash_table_destroy(s->cache);
	g_hash_table_destroy(s->unstored);
	pthread_mutex_destroy(&s->lock);
	g_free(s);
	return NULL;
}

void synth_invalidate(struct synth *s)
{
	pthread_mutex_lock(&s->lock);
	g_hash_table_remove_all(s->cache);
	pthread_mutex_unlock(&s->lock);
}

/* The stored object of `kind` for `theme`, when it was built from the index
 * as it is now. */
static gpointer stored_get(struct lookup *l, const struct kind *kind,
			   const char *theme)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	g_autoptr(GBytes) data = NULL;

	if (db_query_row(
		    lookup_db(l), &q,
		    "SELECT data FROM synth WHERE theme = ?1 AND kind = ?2 "
		    "AND made_by = ?3 AND generation = (SELECT value FROM "
		    "meta WHERE key = 'generation')",
		    "ttt", theme, kind->name, made_by(l)) < 0)
		return NULL;
	data = g_bytes_new(sqlite3_column_blob(q, 0),
			   (gsize)sqlite3_column_bytes(q, 0));
	return kind->unpack(data);
}

/* The object `kind` of `theme`: cached, stored in the index, or built
 * (and then kept when the index did not change meanwhile). */
static int synth_get(struct synth *s, struct lookup *l, const struct kind *kind,
		     const char *theme, gpointer *ret)
{
	g_autofree char *key = g_strconcat(kind->name, ":", theme, NULL);
	struct cached *c;
	gpointer value = NULL;
	uint64_t gen;
	bool built;
	int r = 0;

	pthread_mutex_lock(&s->lock);
	gen = generation_now(s->gen);
	c = g_hash_table_lookup(s->cache, key);
	if (c)
		value = kind->ref(c->value);
	pthread_mutex_unlock(&s->lock);
	if (value) {
		*ret = value;
		return 0;
	}
	value = stored_get(l, kind, theme);
	built = !value;
	if (built)
		r = kind->build(s, l, theme, &value);
	if (r < 0)
		return r;
	pthread_mutex_lock(&s->lock);
	/* a build from an index that changed meanwhile is not kept (the
	 * watcher moves the generation on before it drops the cache) */
	if (generation_now(s->gen) == gen) {
		c = g_new0(struct cached, 1);
		*c = (struct cached){ kind->ref(value), kind };
		g_hash_table_replace(s->cache, g_steal_pointer(&key), c);
	}
	if (built)
		g_hash_table_add(s->unstored, g_strdup(theme));
	pthread_mutex_unlock(&s->lock);
	*ret = value;
	return 0;
}

static int int_cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* GTK takes a scale-2 request of N from a listed 2N×2N directory as
 * readily as from N×N@2 (the sizes are compared in pixels, and a
 * directory of the scale asked for wins only a tie): under gtk the synthesized
 * theme lists no @2 directories, but 2N for each standard N. That halves
 * the names GTK 4 hashes at its set-up (Papirus: 37 directories of 17,900
 * names each before, 20 now). */
static bool synth_scaled_listed(struct lookup *l)
{
	return lookup_rules(l) != LOOKUP_RULES_GTK;
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
	for (unsigned i = 0; !synth_scaled_listed(l) && i < view_n_listed_sizes; i++) {
		int twice = 2 * view_listed_sizes[i];

		if (twice <= 512)
			g_array_append_val(sizes, twice);
	}
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

/* Name lists are stored as the names joined by NUL bytes. */
static GBytes *names_pack(gpointer value)
{
	GPtrArray *names = value;
	GByteArray *out = g_byte_array_new();

	for (unsigned i = 0; i < names->len; i++)
		g_byte_array_append(out, names->pdata[i],
				    (guint)strlen(names->pdata[i]) + 1);
	return g_byte_array_free_to_bytes(out);
}

static gpointer names_unpack(GBytes *data)
{
	gsize len;
	const char *p = g_bytes_get_data(data, &len), *end = p + len;
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);

	while (p < end) {
		const char *nul = memchr(p, '\0', end - p);

		if (!nul)
			break;
		g_ptr_array_add(names, g_strndup(p, nul - p));
		p = nul + 1;
	}
	return names;
}

static GBytes *bytes_pack(gpointer value)
{
	return g_bytes_ref(value);
}

static gpointer bytes_unpack(GBytes *data)
{
	return g_bytes_ref(data);
}

#define NAMES_KIND(n, b)                                               \
	{                                                              \
		n, b, (gpointer(*)(gpointer))g_ptr_array_ref,          \
			(GDestroyNotify)g_ptr_array_unref, names_pack, \
			names_unpack                                   \
	}
#define FILE_KIND(n, b)                                            \
	{                                                          \
		n, b, (gpointer(*)(gpointer))g_bytes_ref,          \
			(GDestroyNotify)g_bytes_unref, bytes_pack, \
			bytes_unpack                               \
	}

static int build_index_theme(struct synth *s, struct lookup *l,
			     const char *theme, gpointer *ret);
/* The sizes toolkits ask for: under gtk the cache holds every name at
 * these, besides the sizes its own theme has it at (the sizes GTK's
 * icon_list_from_theme loads a window icon at, and what a file manager's
 * zoom steps ask). */
static const int asked_sizes[] = { 16, 22, 24, 32, 48, 64, 96, 128 };

static bool px_wanted(int px, GArray *own)
{
	for (size_t i = 0; i < ELEMENTSOF(asked_sizes); i++)
		if (asked_sizes[i] == px)
			return true;
	for (guint i = 0; own && i < own->len; i++)
		if (g_array_index(own, int, i) == px)
			return true;
	return false;
}

/* Under gtk, what the cache lists of each name of `png` (`px`: the
 * listed directories' pixel sizes): the asked sizes and its own theme's,
 * not every listed size. GTK 4 hashes every (directory, name) pair of the
 * cache when it sets a theme up, and GTK 3 and Qt load a window icon at
 * every size a name is listed at: with all 20 sizes of Papirus's chain
 * for every name, a GTK 4 app started 1.25x stock; as stock lists them,
 * no slower. A request at a size not listed for a name goes where it goes
 * without the mount: to the nearest size its theme has, or to scalable/.
 * The size views still list every name (`ls`), and any size still
 * resolves when named. */
static int cache_sizes(struct lookup *l, const char *theme, GPtrArray *png,
		       GArray *px, GHashTable *extra)
{
	g_autoptr(GHashTable) own = NULL;
	int r;

	r = lookup_name_sizes(l, theme, &own);
	if (r < 0)
		return r;
	for (guint i = 0; i < png->len; i++) {
		GArray *in = g_array_new(FALSE, FALSE, sizeof(guint));
		GArray *sizes = g_hash_table_lookup(own, png->pdata[i]);

		for (guint d = 0; d < px->len; d++)
			if (px_wanted((int)g_array_index(px, unsigned, d), sizes))
				g_array_append_val(in, d);
		g_hash_table_insert(extra, png->pdata[i], in);
	}
	g_ptr_array_set_size(png, 0);
	return 0;
}

static int build_icon_cache(struct synth *s, struct lookup *l,
			    const char *theme, gpointer *ret);

static int build_symbolic_pngs(struct synth *s, struct lookup *l,
			       const char *theme, gpointer *ret)
{
	g_autoptr(GPtrArray) all = NULL;
	GPtrArray *kept;
	int r;

	(void)s;
	r = lookup_symbolic_pngs(l, theme, &all);
	if (r < 0)
		return r;
	/* "x.symbolic" of a name that is not symbolic is an icon like any
	 * other, in every view already */
	kept = g_ptr_array_new_with_free_func(g_free);
	for (unsigned i = 0; i < all->len; i++) {
		const char *name = strchr(all->pdata[i], ' ');

		if (name && view_is_symbolic_png(name + 1))
			g_ptr_array_add(kept, g_strdup(all->pdata[i]));
	}
	*ret = kept;
	return 0;
}

/* "PX NAME" entries by PX, then NAME. */
static gint entry_cmp(gconstpointer a, gconstpointer b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	long px = strtol(x, NULL, 10), py = strtol(y, NULL, 10);

	return px != py ? (px < py ? -1 : 1) : strcmp(x, y);
}

static int build_symbolic_svgs(struct synth *s, struct lookup *l,
			       const char *theme, gpointer *ret)
{
	g_autoptr(GPtrArray) names = NULL;
	g_autoptr(GArray) sizes = NULL;
	GPtrArray *out;
	int r;

	(void)s;
	r = lookup_symbolic_variants(l, theme, &names);
	if (r >= 0)
		r = synth_sizes(l, theme, &sizes);
	if (r < 0)
		return r;
	out = g_ptr_array_new_with_free_func(g_free);
	for (unsigned i = 0; i < names->len; i++) {
		const char *name = names->pdata[i];
		g_autofree char *nominal = NULL;
		int ext;

		if (!view_is_symbolic(name) ||
		    lookup_icon(l, theme, name, view_nominal_size(name), 1,
				&nominal, &ext) < 0)
			continue;
		for (unsigned j = 0; j < sizes->len; j++) {
			int px = g_array_index(sizes, int, j);
			g_autofree char *path = NULL;

			if (lookup_icon(l, theme, name, px, 1, &path, &ext) == 0 &&
			    ext == ICON_EXT_SVG && !streq(path, nominal))
				g_ptr_array_add(out, g_strdup_printf("%d %s", px, name));
		}
	}
	g_ptr_array_sort(out, entry_cmp);
	*ret = out;
	return 0;
}

static int build_sized_svgs(struct synth *s, struct lookup *l,
			    const char *theme, gpointer *ret)
{
	g_autoptr(GPtrArray) svg = NULL, bitmaps = NULL;
	GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
	int r = 0;

	if (lookup_rules(l) == LOOKUP_RULES_KDE || lookup_rules(l) == LOOKUP_RULES_QT)
		r = synth_names(s, l, theme, true, &svg);
	if (r >= 0 && lookup_rules(l) == LOOKUP_RULES_QT)
		r = lookup_bitmap_names(l, theme, &bitmaps);
	if (r < 0) {
		g_ptr_array_unref(out);
		return r;
	}
	for (unsigned i = 0; svg && i < svg->len; i++)
		if (!bitmaps || !synth_list_has(bitmaps, svg->pdata[i]))
			g_ptr_array_add(out, g_strdup(svg->pdata[i]));
	*ret = out;
	return 0;
}

enum {
	KIND_NAMES,
	KIND_SVG,
	KIND_SYMBOLIC_PNG,
	KIND_SYMBOLIC_SVG,
	KIND_SIZED_SVG,
	KIND_INDEX_THEME,
	KIND_ICON_CACHE,
};
static const struct kind kinds[] = {
	[KIND_NAMES] = NAMES_KIND("names", build_names),
	[KIND_SVG] = NAMES_KIND("svg", build_svg_names),
	[KIND_SYMBOLIC_PNG] = NAMES_KIND("symbolic.png", build_symbolic_pngs),
	[KIND_SYMBOLIC_SVG] = NAMES_KIND("symbolic.svg", build_symbolic_svgs),
	[KIND_SIZED_SVG] = NAMES_KIND("sized.svg", build_sized_svgs),
	[KIND_INDEX_THEME] = FILE_KIND("index.theme", build_index_theme),
	[KIND_ICON_CACHE] = FILE_KIND("icon-theme.cache", build_icon_cache),
};

int synth_names(struct synth *s, struct lookup *l, const char *theme, bool svg,
		GPtrArray **ret)
{
	return synth_get(s, l, &kinds[svg ? KIND_SVG : KIND_NAMES], theme,
			 (gpointer *)ret);
}

int synth_symbolic_pngs(struct synth *s, struct lookup *l, const char *theme,
			GPtrArray **ret)
{
	return synth_get(s, l, &kinds[KIND_SYMBOLIC_PNG], theme, (gpointer *)ret);
}

int synth_symbolic_svgs(struct synth *s, struct lookup *l, const char *theme,
			GPtrArray **ret)
{
	return synth_get(s, l, &kinds[KIND_SYMBOLIC_SVG], theme, (gpointer *)ret);
}

int synth_sized_svgs(struct synth *s, struct lookup *l, const char *theme,
		     GPtrArray **ret)
{
	return synth_get(s, l, &kinds[KIND_SIZED_SVG], theme, (gpointer *)ret);
}

static int name_cmp(const void *key, const void *elem)
{
	return strcmp(key, *(const char *const *)elem);
}

bool synth_list_has(GPtrArray *names, const char *name)
{
	return names->len &&
	       bsearch(name, names->pdata, names->len, sizeof(gpointer), name_cmp);
}

const char *synth_entry_at(const char *entry, unsigned px)
{
	char *end;
	unsigned long n = strtoul(entry, &end, 10);

	return *end == ' ' && n == px ? end + 1 : NULL;
}

/* Whether GTK (3.24 and 4) ships built-in icons under the hicolor
 * directory `path`: `gresource list` of libgtk-3 and libgtk-4 shows them in
 * these sizes and contexts only. Listing all of hicolor's ~660 directories
 * cost GTK 4's theme set-up ~30% more CPU (Papirus, one lookup: 357-437 ->
 * 475-609 ms, stock 175-201 ms); these 56 are what its resources need. */
static bool gtk_builtin_dir(const char *path)
{
	static const char *const sizes[] = { "16x16", "22x22", "24x24", "32x32",
					     "48x48", "64x64", "scalable" };
	static const char *const contexts[] = { "actions", "categories", "devices",
						"emblems", "emotes",     "mimetypes",
						"places",  "status" };
	const char *slash = strchr(path, '/');
	bool size = false;

	if (!slash)
		return false;
	for (size_t i = 0; i < ELEMENTSOF(sizes); i++)
		size |= strlen(sizes[i]) == (size_t)(slash - path) &&
			strncmp(path, sizes[i], slash - path) == 0;
	for (size_t i = 0; size && i < ELEMENTSOF(contexts); i++)
		if (streq(slash + 1, contexts[i]))
			return true;
	return false;
}

/* A real directory's group, as its theme's own index.theme describes it
 * (its name has a '/': never one of the synthesized views'). */
static void index_theme_dir(GKeyFile *kf, const struct lookup_dir *d)
{
	static const char *const types[] = { [THEME_DIR_FIXED] = "Fixed",
					     [THEME_DIR_SCALABLE] = "Scalable",
					     [THEME_DIR_THRESHOLD] = "Threshold" };

	if (d->type < 0 || d->type >= (int)ELEMENTSOF(types))
		return;
	g_key_file_set_integer(kf, d->path, "Size", d->size);
	if (d->scale != 1)
		g_key_file_set_integer(kf, d->path, "Scale", d->scale);
	g_key_file_set_string(kf, d->path, "Type", types[d->type]);
	if (d->type == THEME_DIR_SCALABLE) {
		g_key_file_set_integer(kf, d->path, "MinSize", d->min_size);
		g_key_file_set_integer(kf, d->path, "MaxSize", d->max_size);
	} else if (d->type == THEME_DIR_THRESHOLD) {
		g_key_file_set_integer(kf, d->path, "Threshold", d->threshold);
	}
}

/* KDE reads the sizes of its icon groups (DesktopDefault, ...) and
 * FollowsColorScheme from [Icon Theme]: the theme's own values, which
 * KDE's parser reads back as it read them from the theme. */
static int index_theme_kde_keys(GKeyFile *kf, struct lookup *l,
				const char *theme)
{
	g_autofree char *keys = NULL;
	g_auto(GStrv) lines = NULL;
	int r;

	r = lookup_theme_kde_keys(l, theme, &keys);
	if (r < 0)
		return r;
	lines = g_strsplit(keys, "\n", -1);
	for (char **line = lines; *line; line++) {
		char *eq = strchr(*line, '=');

		if (!eq)
			continue;
		*eq = '\0';
		g_key_file_set_value(kf, "Icon Theme", *line, eq + 1);
	}
	return 0;
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
	g_autoptr(GArray) real = NULL;
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
	if (lookup_rules(l) == LOOKUP_RULES_KDE) {
		r = index_theme_kde_keys(kf, l, theme);
		if (r < 0)
			return r;
	}
	for (unsigned i = 0; i < sizes->len; i++) {
		int n = g_array_index(sizes, int, i);

		g_ptr_array_add(dirs, g_strdup_printf("%dx%d", n, n));
		g_ptr_array_add(scaled, g_strdup_printf("%dx%d@2", n, n));
	}
	g_ptr_array_add(dirs, g_strdup("scalable"));
	if (streq(theme, "hicolor") && lookup_rules(l) == LOOKUP_RULES_GTK) {
		r = lookup_theme_dirs(l, theme, &real);
		if (r < 0)
			return r;
		for (unsigned i = 0; i < real->len; i++) {
			const char *path = g_array_index(real, struct lookup_dir, i).path;

			if (gtk_builtin_dir(path))
				g_ptr_array_add(dirs, g_strdup(path));
		}
	}
	g_ptr_array_add(dirs, NULL);
	g_ptr_array_add(scaled, NULL);
	/* comma-separated, as the specification writes lists (GKeyFile's
	 * own lists end with a separator) */
	list = g_strjoinv(",", (char **)dirs->pdata);
	g_key_file_set_string(kf, top, "Directories", list);
	g_free(list);
	if (synth_scaled_listed(l)) {
		list = g_strjoinv(",", (char **)scaled->pdata);
		g_key_file_set_string(kf, top, "ScaledDirectories", list);
		g_free(list);
	}
	for (unsigned i = 0; i < sizes->len; i++) {
		int n = g_array_index(sizes, int, i);

		g_key_file_set_integer(kf, dirs->pdata[i], "Size", n);
		g_key_file_set_string(kf, dirs->pdata[i], "Type", "Fixed");
		if (!synth_scaled_listed(l))
			continue;
		g_key_file_set_integer(kf, scaled->pdata[i], "Size", n);
		g_key_file_set_integer(kf, scaled->pdata[i], "Scale", 2);
		g_key_file_set_string(kf, scaled->pdata[i], "Type", "Fixed");
	}
	g_key_file_set_integer(kf, "scalable", "Size", 16);
	g_key_file_set_integer(kf, "scalable", "MinSize", 1);
	g_key_file_set_integer(kf, "scalable", "MaxSize", 1024);
	g_key_file_set_string(kf, "scalable", "Type", "Scalable");
	for (unsigned i = 0; real && i < real->len; i++)
		if (gtk_builtin_dir(g_array_index(real, struct lookup_dir, i).path))
			index_theme_dir(kf, &g_array_index(real, struct lookup_dir, i));
	text = g_key_file_to_data(kf, &len, NULL);
	*ret = g_bytes_new_take(text, len);
	return 0;
}

/* The "PX NAME" `entries` into `extra` (iconcache.h): each name in the
 * dirs of that PX (`px`, guint per dir, 0 for none), with `flag`. */
static void extra_add(GHashTable *extra, GPtrArray *entries, GArray *px,
		      guint flag)
{
	for (unsigned i = 0; i < entries->len; i++)
		for (guint d = 0; d < px->len; d++) {
			const char *name = synth_entry_at(
				entries->pdata[i], g_array_index(px, unsigned, d));
			guint v = d | flag;
			GArray *in;

			if (!name)
				continue;
			in = g_hash_table_lookup(extra, name);
			if (!in) {
				in = g_array_new(FALSE, FALSE, sizeof(guint));
				g_hash_table_insert(extra, (gpointer)name, in);
			}
			g_array_append_val(in, v);
		}
}

static int build_icon_cache(struct synth *s, struct lookup *l,
			    const char *theme, gpointer *ret)
{
	g_autoptr(GArray) sizes = NULL;
	g_autoptr(GPtrArray) dirs = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) names = NULL, svg = NULL, symbolic = NULL;
	g_autoptr(GPtrArray) variants = NULL, sized = NULL;
	g_autoptr(GPtrArray) png = g_ptr_array_new();
	g_autoptr(GArray) px = g_array_new(FALSE, FALSE, sizeof(unsigned));
	/* a name some size dirs hold → those dirs (guint, iconcache.h) */
	g_autoptr(GHashTable) extra = g_hash_table_new_full(
		g_str_hash, g_str_equal, NULL, (GDestroyNotify)g_array_unref);
	GByteArray *out;
	int r;

	r = synth_sizes(l, theme, &sizes);
	if (r >= 0)
		r = synth_names(s, l, theme, false, &names);
	if (r >= 0)
		r = synth_names(s, l, theme, true, &svg);
	if (r >= 0)
		r = synth_symbolic_pngs(s, l, theme, &symbolic);
	if (r >= 0)
		r = synth_symbolic_svgs(s, l, theme, &variants);
	if (r >= 0)
		r = synth_sized_svgs(s, l, theme, &sized);
	if (r < 0)
		return r;
	for (unsigned scale = 1; scale <= (synth_scaled_listed(l) ? 2 : 1); scale++)
		for (unsigned i = 0; i < sizes->len; i++) {
			int n = g_array_index(sizes, int, i);
			unsigned p = (unsigned)n * scale;

			g_ptr_array_add(
				dirs,
				scale == 1 ? g_strdup_printf("%dx%d", n, n)
					   : g_strdup_printf("%dx%d@2", n, n));
			/* none in the @2 views: GTK 3 and 4 then took
			 * 24x24@2's at 20 px, where stock draws the SVG */
			p = scale == 1 ? p : 0;
			g_array_append_val(px, p);
		}
	g_ptr_array_add(dirs, g_strdup("scalable"));
	for (unsigned i = 0; i < names->len; i++)
		if (!view_is_symbolic(names->pdata[i]) &&
		    !synth_list_has(sized, names->pdata[i]))
			g_ptr_array_add(png, names->pdata[i]);
	extra_add(extra, symbolic, px, 0);
	if (lookup_rules(l) == LOOKUP_RULES_GTK) {
		extra_add(extra, variants, px, ICONCACHE_SVG);
		r = cache_sizes(l, theme, png, px, extra);
		if (r < 0)
			return r;
	}
	out = g_byte_array_new();
	iconcache_build(dirs, png, svg, sized, extra, out);
	*ret = g_byte_array_free_to_bytes(out);
	return 0;
}

int synth_file(struct synth *s, struct lookup *l, const char *theme,
	       enum synth_file which, GBytes **ret)
{
	return synth_get(s, l,
			 &kinds[which == SYNTH_INDEX_THEME ? KIND_INDEX_THEME
							   : KIND_ICON_CACHE],
			 theme, (gpointer *)ret);
}

/* Store every kind of `theme` that the index lacks at its generation. */
static int store_theme(struct synth *s, struct lookup *l, sqlite3 *db,
		       const char *theme)
{
	for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
		_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
		g_autoptr(GBytes) data = NULL;
		gpointer value = stored_get(l, &kinds[i], theme);
		int r;

		if (value) {
			kinds[i].unref(value);
			continue;
		}
		r = synth_get(s, l, &kinds[i], theme, &value);
		if (r < 0)
			return r;
		data = kinds[i].pack(value);
		kinds[i].unref(value);
		r = db_query(db, &q,
			     "INSERT OR REPLACE INTO synth(theme, kind, "
			     "generation, made_by, data) VALUES (?1, ?2, "
			     "(SELECT value FROM meta WHERE key = "
			     "'generation'), ?3, ?4)",
			     "ttt", theme, kinds[i].name, made_by(l));
		if (r < 0)
			return r;
		/* an empty list is an empty blob, not NULL */
		sqlite3_bind_blob(q, 4,
				  g_bytes_get_size(data)
					  ? g_bytes_get_data(data, NULL)
					  : "",
				  (int)g_bytes_get_size(data), SQLITE_STATIC);
		r = db_errno(sqlite3_step(q));
		if (r < 0)
			return r;
	}
	return 0;
}

bool synth_unstored(struct synth *s)
{
	bool any;

	pthread_mutex_lock(&s->lock);
	any = g_hash_table_size(s->unstored) > 0;
	pthread_mutex_unlock(&s->lock);
	return any;
}

bool synth_stored(struct lookup *l, const char *theme)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;

	if (db_query_row(lookup_db(l), &q,
			 "SELECT count(*) FROM synth WHERE theme = ?1 AND "
			 "made_by = ?2 AND generation = (SELECT value FROM "
			 "meta WHERE key = 'generation')",
			 "tt", theme, made_by(l)) < 0)
		return false;
	return sqlite3_column_int(q, 0) == (int)ELEMENTSOF(kinds);
}

int synth_store(struct synth *s, struct lookup *l, sqlite3 *db,
		const char *const *themes, long long deadline)
{
	g_autoptr(GHashTable) all =
		g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	GHashTableIter it;
	const char *theme;
	int r, more = 0;

	for (const char *const *t = themes; *t; t++)
		g_hash_table_add(all, g_strdup(*t));
	/* what was stored before, and what was built here since */
	if (db_query(db, &q, "SELECT DISTINCT theme FROM synth", "") >= 0)
		while (sqlite3_step(q) == SQLITE_ROW)
			g_hash_table_add(all, g_strdup(db_column_str(q, 0)));
	pthread_mutex_lock(&s->lock);
	g_hash_table_iter_init(&it, s->unstored);
	while (g_hash_table_iter_next(&it, (void **)&theme, NULL))
		g_hash_table_add(all, g_strdup(theme));
	g_hash_table_remove_all(s->unstored);
	pthread_mutex_unlock(&s->lock);

	r = db_exec(db, "BEGIN IMMEDIATE");
	if (r < 0)
		return r;
	g_hash_table_iter_init(&it, all);
	while (g_hash_table_iter_next(&it, (void **)&theme, NULL)) {
		g_autofree char *a = NULL, *b = NULL, *c = NULL;

		/* themes that are gone are not stored again */
		if (lookup_theme_info(l, theme, &a, &b, &c) < 0)
			continue;
		if (deadline >= 0 && now_ms() >= deadline) {
			more = 1; /* the rest next time */
			pthread_mutex_lock(&s->lock);
			g_hash_table_add(s->unstored, g_strdup(theme));
			pthread_mutex_unlock(&s->lock);
			continue;
		}
		r = store_theme(s, l, db, theme);
		if (r < 0)
			break;
	}
	if (r >= 0 && !more) {
		_cleanup_(sqlite3_finalizep) sqlite3_stmt *del = NULL;

		r = db_query(db, &del,
			     "DELETE FROM synth WHERE made_by != ?1 OR "
			     "generation != (SELECT value FROM meta "
			     "WHERE key = 'generation')",
			     "t", made_by(l));
		if (r >= 0)
			r = db_errno(sqlite3_step(del));
	}
	if (r >= 0)
		r = db_exec(db, "COMMIT");
	if (r < 0)
		(void)db_exec(db, "ROLLBACK");
	return r < 0 ? r : more;
}
