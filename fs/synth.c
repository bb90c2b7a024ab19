/* Synthesized files and name lists; see synth.h. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "db.h"
#include "layered.h"
#include "index.h"
#include "log.h"
#include "lookup-chain.h"
#include "synth.h"
#include "synth-file.h"
#include "time-util.h"
#include "view.h"

/* Which rules built a stored file: this version, and the format of what
 * is synthesized (bumped whenever the files' content changes for the same
 * index: 2 the symbolic rule, 4 hicolor's directories of GTK's built-in
 * icons, 5 pre-encoded symbolic PNGs in size views, 6 the toolkits' rules,
 * 7 per-size symbolic SVGs and KDE's SVGs in size views, 8 Qt's SVGs
 * there too, 9 no @2 directories under gtk, 10 the cache's names at
 * their own and the asked sizes only, 11 its values aligned, 12 a user's
 * own rows deflated, 13 every symbolic SVG pre-encoded under gtk, 14 the
 * cache's names at their own and the asked sizes under qt too, 15 @2
 * views of the chain's Scale=2 sizes under gtk). */
#define SYNTH_FORMAT  "15"

/* What a stored row says made it: this version and format, and the rules
 * of the lookup that built it (the files differ per toolkit; an index
 * keeps each toolkit's side by side). */
#define MADE_BY ICONFS_VERSION "/" SYNTH_FORMAT "/"
static const char *made_by(struct lookup *l)
{
	static const char *const by[_LOOKUP_RULES_MAX] = {
		[LOOKUP_RULES_GTK] = MADE_BY "gtk",
		[LOOKUP_RULES_KDE] = MADE_BY "kde",
		[LOOKUP_RULES_QT] = MADE_BY "qt",
		[LOOKUP_RULES_SPEC] = MADE_BY "spec",
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
	/* objects built here rather than read from the index; lock */
	unsigned long long built;
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
/* The query of the stored `kind` of `theme` (its data when `data`, else
 * 1): the index's own, or the machine's (as the index is its copy). */
static int stored_query(struct lookup *l, const struct kind *kind,
			const char *theme, bool data, sqlite3_stmt **ret)
{
	g_autofree char *arm = g_strdup_printf(
		"SELECT %s FROM {schema}.synth WHERE theme = ?1 AND kind = ?2 "
		"AND made_by = ?3 AND generation = (SELECT value FROM "
		"{schema}.meta WHERE key = 'generation')",
		data ? "data" : "1");
	g_autofree char *sql = layered_derived_sql(
		lookup_db(l), arm, "SELECT * FROM ({arms}) LIMIT 1");

	return db_query_row(lookup_db(l), ret, sql, "ttt", theme, kind->name,
			    made_by(l));
}

/* Whether `kind` of `theme` is stored, without reading it. */
static bool stored_has(struct lookup *l, const struct kind *kind,
		       const char *theme)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;

	return stored_query(l, kind, theme, false, &q) == 0;
}

/* A user's index layered over the machine's keeps its own synthesized
 * files deflated: they live there only until the layer holds the same (a
 * first login with Papirus: 1.4 MB, 0.5 deflated), while the machine's,
 * read by every mount, are stored as they are. A deflated row is a gzip
 * stream, whose magic no stored file or name list starts with (a name
 * list starts with a name, index.theme with '[', a cache with its
 * version's 0 byte). */
static const unsigned char gzip_magic[2] = { 0x1f, 0x8b };
/* a stream that claims more is not trusted (Papirus's cache: 0.7 MB) */
#define STORED_MAX (64u << 20)

static bool is_deflated(const unsigned char *p, size_t len)
{
	return len >= 18 && !memcmp(p, gzip_magic, sizeof(gzip_magic));
}

/* `data` as a gzip stream at zlib's fastest level (Papirus's 1.4 MB:
 * about 10 ms), or NULL when zlib fails. */
static GBytes *deflated(GBytes *data)
{
	gsize len;
	const void *p = g_bytes_get_data(data, &len);
	GByteArray *out;
	z_stream z = { 0 };
	int r;

	if (len > STORED_MAX ||
	    deflateInit2(&z, 1, Z_DEFLATED, MAX_WBITS + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return NULL;
	out = g_byte_array_new();
	g_byte_array_set_size(out, (guint)deflateBound(&z, (uLong)len));
	z.next_in = (Bytef *)p;
	z.avail_in = (uInt)len;
	z.next_out = out->data;
	z.avail_out = out->len;
	r = deflate(&z, Z_FINISH);
	g_byte_array_set_size(out, (guint)z.total_out);
	deflateEnd(&z);
	if (r != Z_STREAM_END) {
		g_byte_array_unref(out);
		return NULL;
	}
	return g_byte_array_free_to_bytes(out);
}

/* The bytes of the gzip stream `p`, or NULL when it is not whole. */
static GBytes *inflated(const unsigned char *p, size_t len)
{
	/* the stream ends with its input's size, little-endian */
	uint32_t size = (uint32_t)p[len - 4] | (uint32_t)p[len - 3] << 8 |
			(uint32_t)p[len - 2] << 16 | (uint32_t)p[len - 1] << 24;
	g_autofree unsigned char *out = NULL;
	z_stream z = { 0 };
	int r;

	if (size > STORED_MAX || inflateInit2(&z, MAX_WBITS + 16) != Z_OK)
		return NULL;
	out = g_malloc(size ? size : 1);
	z.next_in = (Bytef *)p;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = size;
	r = inflate(&z, Z_FINISH);
	inflateEnd(&z);
	if (r != Z_STREAM_END || z.total_out != size || z.avail_in)
		return NULL;
	return g_bytes_new_take(g_steal_pointer(&out), size);
}

static gpointer stored_get(struct lookup *l, const struct kind *kind,
			   const char *theme)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	g_autoptr(GBytes) data = NULL;
	const unsigned char *p;
	size_t len;

	if (stored_query(l, kind, theme, true, &q) < 0)
		return NULL;
	p = sqlite3_column_blob(q, 0);
	len = (size_t)sqlite3_column_bytes(q, 0);
	data = is_deflated(p, len) ? inflated(p, len) : g_bytes_new(p, len);
	if (!data) {
		log_warning("the stored %s of theme '%s' is damaged: built "
			    "again",
			    kind->name, theme);
		return NULL;
	}
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
	if (built) {
		g_hash_table_add(s->unstored, g_strdup(theme));
		s->built++;
	}
	pthread_mutex_unlock(&s->lock);
	*ret = value;
	return 0;
}

static int int_cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

bool synth_scaled_listed(struct lookup *l)
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

int synth_scaled_sizes(struct lookup *l, const char *theme, GArray **ret)
{
	if (synth_scaled_listed(l))
		return synth_sizes(l, theme, ret);
	return lookup_chain_scaled_sizes(l, theme, ret);
}

static int build_names(struct synth *s, struct lookup *l, const char *theme,
		       gpointer *ret)
{
	(void)s;
	return lookup_names(l, theme, (GPtrArray **)ret);
}

/* Whether the lookup of `name` at its nominal size (scale 1) is an SVG. */
static bool nominal_is_svg(struct lookup *l, const char *theme,
			   const char *name)
{
	g_autofree char *src = NULL;
	int ext;

	return lookup_icon(l, theme, name, view_nominal_size(name), 1, &src,
			   &ext) == 0 &&
	       ext == ICON_EXT_SVG;
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
	for (unsigned i = 0; i < all->len; i++)
		if (nominal_is_svg(l, theme, all->pdata[i]))
			g_ptr_array_add(names, g_strdup(all->pdata[i]));
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
			     const char *theme, gpointer *ret)
{
	return synth_file_index_theme(s, l, theme, (GBytes **)ret);
}

static int build_icon_cache(struct synth *s, struct lookup *l,
			    const char *theme, gpointer *ret)
{
	return synth_file_icon_cache(s, l, theme, (GBytes **)ret);
}

/* "PX NAME" entries by PX, then NAME. */
static gint entry_cmp(gconstpointer a, gconstpointer b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	long px = strtol(x, NULL, 10), py = strtol(y, NULL, 10);

	return px != py ? (px < py ? -1 : 1) : strcmp(x, y);
}

static int build_symbolic_pngs(struct synth *s, struct lookup *l,
			       const char *theme, gpointer *ret)
{
	g_autoptr(GPtrArray) all = NULL, svg = NULL;
	g_autoptr(GHashTable) own = g_hash_table_new(g_str_hash, g_str_equal);
	GPtrArray *kept;
	int r;

	r = lookup_symbolic_pngs(l, theme, &all);
	if (r >= 0 && lookup_rules(l) == LOOKUP_RULES_GTK)
		r = synth_names(s, l, theme, true, &svg);
	if (r < 0)
		return r;
	/* "x.symbolic" of a name that is not symbolic is an icon like any
	 * other, in every view already */
	kept = g_ptr_array_new_with_free_func(g_free);
	for (unsigned i = 0; i < all->len; i++) {
		const char *name = strchr(all->pdata[i], ' ');

		if (name && view_is_symbolic_png(name + 1)) {
			g_ptr_array_add(kept, g_strdup(all->pdata[i]));
			g_hash_table_add(own, all->pdata[i]);
		}
	}
	/* under gtk, every symbolic SVG the theme lacks a file of at
	 * SYNTH_SYMBOLIC_PX for, encoded as GTK encodes it (tree.c) */
	for (unsigned i = 0; svg && i < svg->len; i++) {
		const char *name = svg->pdata[i];
		g_autofree char *e = NULL;

		if (!view_is_symbolic(name) || view_is_symbolic_png(name))
			continue;
		e = g_strdup_printf("%d %s.symbolic", SYNTH_SYMBOLIC_PX, name);
		if (g_hash_table_contains(own, e))
			continue;
		g_ptr_array_add(kept, g_steal_pointer(&e));
	}
	g_ptr_array_sort(kept, entry_cmp);
	*ret = kept;
	return 0;
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
		       const char *theme, bool deflate)
{
	for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
		_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
		g_autoptr(GBytes) data = NULL;
		gpointer value;
		int r;

		if (stored_has(l, &kinds[i], theme))
			continue;
		r = synth_get(s, l, &kinds[i], theme, &value);
		if (r < 0)
			return r;
		data = kinds[i].pack(value);
		kinds[i].unref(value);
		if (deflate && g_bytes_get_size(data)) {
			GBytes *smaller = deflated(data);

			if (!smaller)
				return -ENOMEM;
			g_bytes_unref(data);
			data = smaller;
		}
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

unsigned long long synth_built(struct synth *s)
{
	unsigned long long n;

	pthread_mutex_lock(&s->lock);
	n = s->built;
	pthread_mutex_unlock(&s->lock);
	return n;
}

bool synth_stored(struct lookup *l, const char *theme)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;

	g_autofree char *sql = layered_derived_sql(
		lookup_db(l),
		"SELECT count(*) AS n FROM {schema}.synth WHERE theme = ?1 AND "
		"made_by = ?2 AND generation = (SELECT value FROM "
		"{schema}.meta WHERE key = 'generation')",
		"SELECT max(n) FROM ({arms})");

	if (db_query_row(lookup_db(l), &q, sql, "tt", theme, made_by(l)) < 0)
		return false;
	return sqlite3_column_int(q, 0) == (int)ELEMENTSOF(kinds);
}

char **synth_session_themes(const char *theme, enum lookup_rules rules)
{
	if (rules == LOOKUP_RULES_GTK)
		return g_strdupv(
			(char *[]){ (char *)theme, "Adwaita", "gnome",
				    "hicolor", NULL });
	if (rules == LOOKUP_RULES_KDE)
		return g_strdupv((char *[]){ (char *)theme, "breeze",
					     "hicolor", NULL });
	return g_strdupv((char *[]){ (char *)theme, "hicolor", NULL });
}

bool synth_all_stored(struct lookup *l, char *const *themes)
{
	for (char *const *t = themes; *t; t++)
		if (lookup_theme_exists(l, *t) >= 0 && !synth_stored(l, *t))
			return false; /* one not installed has nothing to store */
	return true;
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
	/* what was stored before for these rules, and what was built here
	 * since */
	if (db_query(db, &q,
		     "SELECT DISTINCT theme FROM synth WHERE made_by = ?1", "t",
		     made_by(l)) >= 0)
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
		/* themes that are gone are not stored again */
		if (lookup_theme_exists(l, theme) < 0)
			continue;
		if (deadline >= 0 && now_ms() >= deadline) {
			more = 1; /* the rest next time */
			pthread_mutex_lock(&s->lock);
			g_hash_table_add(s->unstored, g_strdup(theme));
			pthread_mutex_unlock(&s->lock);
			continue;
		}
		r = store_theme(s, l, db, theme,
				layered_over_machine(db));
		if (r < 0)
			break;
	}
	if (r >= 0 && !more) {
		_cleanup_(sqlite3_finalizep) sqlite3_stmt *del = NULL;

		g_autofree char *shadowed = layered_shadowed_sql(db, "synth");

		/* other rules' rows of this build stay until the index moves
		 * on (another desktop's session, the layer's toolkits) */
		r = db_query(db, &del,
			     "DELETE FROM synth WHERE substr(made_by, 1, "
			     "length(?1)) != ?1 OR generation != (SELECT "
			     "value FROM meta WHERE key = 'generation')",
			     "t", MADE_BY);
		if (r >= 0)
			r = db_errno(sqlite3_step(del));
		/* what the layer holds for every user, it serves */
		if (r >= 0 && shadowed)
			r = db_exec(db, shadowed);
	}
	if (r >= 0)
		r = db_exec(db, "COMMIT");
	if (r < 0)
		(void)db_exec(db, "ROLLBACK");
	else
		db_shrink(db);
	return r < 0 ? r : more;
}
