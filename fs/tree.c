/* Inodes of the mounted tree; see tree.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "iconcache.h"
#include "log.h"
#include "scan.h"
#include "tree.h"
#include "view.h"

enum node_kind {
	NODE_ROOT,
	NODE_ICONS,	  /* icons/ */
	NODE_THEME,	  /* icons/<Theme>/ */
	NODE_SIZEDIR,	  /* icons/<Theme>/<N>x<N>[@2]/ */
	NODE_SCALABLE,	  /* icons/<Theme>/scalable/ */
	NODE_FLATDIR,	  /* <N>[@S]/ */
	NODE_ICON,	  /* a .png in a size dir */
	NODE_SVG,	  /* a .svg in scalable/ */
	NODE_INDEX_THEME, /* icons/<Theme>/index.theme */
	NODE_ICON_CACHE,  /* icons/<Theme>/icon-theme.cache */
};

struct node {
	uint64_t ino;
	uint64_t nlookup; /* kernel references; tree.lock */
	uint64_t parent;  /* the directory it was looked up in */
	char *entry;	  /* its name there */
	enum node_kind kind;
	char *theme;
	int size, scale;
	char *name; /* icon name of NODE_ICON / NODE_SVG */
	char *key;
	uint64_t used; /* tree.clock at the last lookup/getattr/open */
	/* Files: what the last lookup resolved; tree.lock. */
	struct icon_content content;
	struct timespec mtime;
};

struct tree {
	char *default_theme;
	struct content *content;
	uid_t uid;
	gid_t gid;
	struct tree_counters counters;

	pthread_mutex_t lock;
	struct timespec refreshed; /* mtime of directories; lock */
	GHashTable *by_ino;	   /* uint64 → node; lock */
	GHashTable *by_key;	   /* key → node; lock */
	uint64_t clock;		   /* ticks on every use of a node; lock */
	/* Bumped whenever the index changed (tree_collect_invalidations,
	 * tree_flush): what was built from an older index is not kept. */
	uint64_t generation; /* lock */
	struct node root;
	/* Listings of icon names per theme, "T" for size views and "T/svg"
	 * for scalable/: built once, dropped by tree_flush(); lock. */
	GHashTable *names_cache;
	/* Built icon-theme.cache files per theme (GBytes); lock. */
	GHashTable *icon_caches;
	/* Negative entries the kernel may hold: "parent\x1fentry" → struct
	 * negative, at most TREE_NEGATIVES_MAX; lock. */
	GHashTable *negatives;
};

struct negative {
	uint64_t parent;
	char *entry;
};

static void negative_free(struct negative *n)
{
	g_free(n->entry);
	g_free(n);
}

static bool kind_is_dir(enum node_kind k)
{
	return k <= NODE_FLATDIR;
}

static void node_free(struct node *n)
{
	g_free(n->theme);
	g_free(n->name);
	g_free(n->key);
	g_free(n->entry);
	icon_content_clear(&n->content);
	g_free(n);
}

int tree_new(const char *default_theme, struct content *content,
	     struct tree **ret)
{
	struct tree *t = g_new0(struct tree, 1);

	t->default_theme = g_strdup(default_theme);
	t->content = content;
	t->uid = getuid();
	t->gid = getgid();
	pthread_mutex_init(&t->lock, NULL);
	clock_gettime(CLOCK_REALTIME, &t->refreshed);
	t->by_ino = g_hash_table_new(g_int64_hash, g_int64_equal);
	t->by_key = g_hash_table_new(g_str_hash, g_str_equal);
	t->icon_caches = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					       (GDestroyNotify)g_bytes_unref);
	t->names_cache =
		g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
				      (GDestroyNotify)g_ptr_array_unref);
	t->negatives = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					     (GDestroyNotify)negative_free);
	t->root.ino = TREE_ROOT_INO;
	t->root.kind = NODE_ROOT;
	t->root.nlookup = 1;
	g_hash_table_insert(t->by_ino, &t->root.ino, &t->root);
	*ret = t;
	return 0;
}

struct tree *tree_free(struct tree *t)
{
	GHashTableIter it;
	struct node *n;

	if (!t)
		return NULL;
	g_hash_table_iter_init(&it, t->by_key);
	while (g_hash_table_iter_next(&it, NULL, (void **)&n))
		node_free(n);
	g_hash_table_destroy(t->by_key);
	g_hash_table_destroy(t->by_ino);
	g_hash_table_destroy(t->names_cache);
	g_hash_table_destroy(t->icon_caches);
	g_hash_table_destroy(t->negatives);
	pthread_mutex_destroy(&t->lock);
	g_free(t->default_theme);
	g_free(t);
	return NULL;
}

struct tree_counters *tree_counters(struct tree *t)
{
	return &t->counters;
}

static uint64_t tree_generation(struct tree *t)
{
	uint64_t gen;

	pthread_mutex_lock(&t->lock);
	gen = t->generation;
	pthread_mutex_unlock(&t->lock);
	return gen;
}

/* The kernel will cache the miss of `entry` in `parent`: remember it, so
 * that a change can invalidate exactly the misses the kernel holds. A miss
 * answered from an index that changed meanwhile, or past the bound, is
 * only cached briefly. Returns the entry timeout to reply with. */
static double negative_note(struct tree *t, uint64_t parent, const char *entry,
			    uint64_t gen)
{
	g_autofree char *key = g_strdup_printf("%" PRIu64 "\x1f%s", parent,
					       entry);
	double timeout = TREE_TIMEOUT;

	pthread_mutex_lock(&t->lock);
	if (t->generation != gen)
		timeout = TREE_NEGATIVE_BRIEF;
	else if (!g_hash_table_contains(t->negatives, key)) {
		if (g_hash_table_size(t->negatives) >= TREE_NEGATIVES_MAX) {
			timeout = TREE_NEGATIVE_BRIEF;
		} else {
			struct negative *n = g_new0(struct negative, 1);

			n->parent = parent;
			n->entry = g_strdup(entry);
			g_hash_table_insert(t->negatives,
					    g_steal_pointer(&key), n);
		}
	}
	pthread_mutex_unlock(&t->lock);
	return timeout;
}

void tree_set_refresh_time(struct tree *t, struct timespec when)
{
	pthread_mutex_lock(&t->lock);
	t->refreshed = when;
	pthread_mutex_unlock(&t->lock);
}

/* A copy of the fields of a node that requests need, taken under the lock
 * so that the node may be forgotten meanwhile. */
struct node_view {
	enum node_kind kind;
	char *theme;
	int size, scale;
	char *name;
	uint64_t ino, parent;
};

/* lock */
static struct node_view node_view_of(const struct node *n)
{
	return (struct node_view){ n->kind,	    g_strdup(n->theme),
				   n->size,	    n->scale,
				   g_strdup(n->name), n->ino,
				   n->parent ? n->parent : TREE_ROOT_INO };
}

static int child_parse(struct tree *t, const struct node_view *p,
		       const char *name, enum node_kind *ret_kind,
		       char **ret_theme, int *ret_size, int *ret_scale,
		       char **ret_name);

static void node_view_clear(struct node_view *v)
{
	g_free(v->theme);
	g_free(v->name);
}

static int node_view_get(struct tree *t, uint64_t ino, struct node_view *ret)
{
	struct node *n;

	pthread_mutex_lock(&t->lock);
	n = g_hash_table_lookup(t->by_ino, &ino);
	if (n)
		*ret = node_view_of(n);
	pthread_mutex_unlock(&t->lock);
	return n ? 0 : -ESTALE;
}

static void fill_stat(struct tree *t, const struct node *n, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = n->ino;
	st->st_uid = t->uid;
	st->st_gid = t->gid;
	st->st_blksize = 4096;
	if (kind_is_dir(n->kind)) {
		st->st_mode = S_IFDIR | 0555;
		st->st_nlink = 2;
		st->st_mtim = st->st_ctim = st->st_atim = t->refreshed;
	} else {
		st->st_mode = S_IFREG | 0444;
		st->st_nlink = 1;
		st->st_size = (off_t)n->content.size;
		st->st_blocks = (st->st_size + 511) / 512;
		st->st_mtim = st->st_ctim = st->st_atim = n->mtime;
	}
}

static char *node_key(enum node_kind kind, const char *theme, int size,
		      int scale, const char *name)
{
	return g_strdup_printf("%d\x1f%s\x1f%d\x1f%d\x1f%s", kind,
			       theme ? theme : "", size, scale,
			       name ? name : "");
}

/* A node's inode number is a hash of its key, so that a listing can give
 * each entry the d_ino its lookup will give (FNV-1a; 0 and the root's 1
 * are skipped). A collision, vanishingly rare, moves a node to the next
 * free number: its listed d_ino then differs, nothing else. */
static uint64_t ino_of_key(const char *key)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (const unsigned char *p = (const unsigned char *)key; *p; p++)
		h = (h ^ *p) * 0x100000001b3ULL;
	return h > TREE_ROOT_INO ? h : h + TREE_ROOT_INO + 1;
}

/* The inode number of the node with `key`, whether or not it exists yet;
 * lock. */
static uint64_t ino_for_key_locked(struct tree *t, const char *key)
{
	struct node *n = g_hash_table_lookup(t->by_key, key);

	return n ? n->ino : ino_of_key(key);
}

/* Find or make the node for (kind, theme, size, scale, name), take one
 * kernel reference, replace its content with *content (taken over) and
 * return its attributes. */
static uint64_t node_ref(struct tree *t, uint64_t parent, const char *entry,
			 enum node_kind kind, const char *theme, int size,
			 int scale, const char *name,
			 struct icon_content *content, struct stat *ret_st)
{
	g_autofree char *key = node_key(kind, theme, size, scale, name);
	struct node *n;
	uint64_t ino;

	pthread_mutex_lock(&t->lock);
	n = g_hash_table_lookup(t->by_key, key);
	if (!n) {
		n = g_new0(struct node, 1);
		n->ino = ino_of_key(key);
		while (n->ino <= TREE_ROOT_INO ||
		       g_hash_table_contains(t->by_ino, &n->ino))
			n->ino++;
		n->kind = kind;
		n->theme = g_strdup(theme);
		n->size = size;
		n->scale = scale;
		n->name = g_strdup(name);
		n->parent = parent;
		n->entry = g_strdup(entry);
		n->key = g_steal_pointer(&key);
		g_hash_table_insert(t->by_key, n->key, n);
		g_hash_table_insert(t->by_ino, &n->ino, n);
	}
	n->nlookup++;
	n->used = ++t->clock;
	if (content) {
		icon_content_clear(&n->content);
		n->content = *content;
		*content = (struct icon_content){ 0 };
		n->mtime = n->content.mtime;
	}
	fill_stat(t, n, ret_st);
	ino = n->ino;
	pthread_mutex_unlock(&t->lock);
	return ino;
}

void tree_forget(struct tree *t, uint64_t ino, uint64_t nlookup)
{
	struct node *n;

	if (ino == TREE_ROOT_INO)
		return;
	pthread_mutex_lock(&t->lock);
	n = g_hash_table_lookup(t->by_ino, &ino);
	if (n) {
		n->nlookup = n->nlookup > nlookup ? n->nlookup - nlookup : 0;
		if (n->nlookup == 0) {
			g_hash_table_remove(t->by_ino, &n->ino);
			g_hash_table_remove(t->by_key, n->key);
			node_free(n);
		}
	}
	pthread_mutex_unlock(&t->lock);
}

int tree_getattr(struct tree *t, uint64_t ino, struct stat *ret_st)
{
	struct node *n;

	atomic_fetch_add(&t->counters.getattrs, 1);
	pthread_mutex_lock(&t->lock);
	n = g_hash_table_lookup(t->by_ino, &ino);
	if (n) {
		n->used = ++t->clock;
		fill_stat(t, n, ret_st);
	}
	pthread_mutex_unlock(&t->lock);
	return n ? 0 : -ESTALE;
}

static int theme_exists(struct tree_ctx *x, const char *theme)
{
	g_autofree char *a = NULL, *b = NULL, *c = NULL;
	return lookup_theme_info(x->l, theme, &a, &b, &c);
}

static int theme_names(struct tree *t, struct tree_ctx *x, const char *theme,
		       bool svg, GPtrArray **ret);

static int int_cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* The sizes listed in a theme's size views: the standard ones and the
 * Size of every non-Scalable directory in its chain, sorted, each once. */
static int theme_sizes(struct tree_ctx *x, const char *theme, GArray **ret)
{
	GArray *sizes;
	unsigned n = 0;
	int r;

	r = lookup_chain_sizes(x->l, theme, VIEW_SIZE_MAX, &sizes);
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

/* The synthetic index.theme of `theme`: every size view as a Fixed
 * directory, scalable/ as Scalable, Inherits=hicolor. Written by GKeyFile,
 * so that values from the theme's own file (Name, Comment, Example) are
 * escaped as GKeyFile (and so every toolkit) reads them back. */
static int index_theme_text(struct tree_ctx *x, const char *theme, GString *out)
{
	g_autofree char *name = NULL, *comment = NULL, *example = NULL;
	g_autofree char *text = NULL;
	g_autoptr(GKeyFile) kf = g_key_file_new();
	g_autoptr(GArray) sizes = NULL;
	g_autoptr(GPtrArray) dirs = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) scaled = g_ptr_array_new_with_free_func(g_free);
	const char *top = "Icon Theme";
	char *list;
	gsize len;
	int r;

	r = lookup_theme_info(x->l, theme, &name, &comment, &example);
	if (r >= 0)
		r = theme_sizes(x, theme, &sizes);
	if (r < 0)
		return r;
	g_key_file_set_string(kf, top, "Name", *name ? name : theme);
	if (*comment)
		g_key_file_set_string(kf, top, "Comment", comment);
	if (*example)
		g_key_file_set_string(kf, top, "Example", example);
	g_key_file_set_string(kf, top, "Inherits", "hicolor");
	for (unsigned i = 0; i < sizes->len; i++) {
		int s = g_array_index(sizes, int, i);

		g_ptr_array_add(dirs, g_strdup_printf("%dx%d", s, s));
		g_ptr_array_add(scaled, g_strdup_printf("%dx%d@2", s, s));
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
		int s = g_array_index(sizes, int, i);

		g_key_file_set_integer(kf, dirs->pdata[i], "Size", s);
		g_key_file_set_string(kf, dirs->pdata[i], "Type", "Fixed");
		g_key_file_set_integer(kf, scaled->pdata[i], "Size", s);
		g_key_file_set_integer(kf, scaled->pdata[i], "Scale", 2);
		g_key_file_set_string(kf, scaled->pdata[i], "Type", "Fixed");
	}
	g_key_file_set_integer(kf, "scalable", "Size", 16);
	g_key_file_set_integer(kf, "scalable", "MinSize", 1);
	g_key_file_set_integer(kf, "scalable", "MaxSize", 1024);
	g_key_file_set_string(kf, "scalable", "Type", "Scalable");
	text = g_key_file_to_data(kf, &len, NULL);
	g_string_append_len(out, text, (gssize)len);
	return 0;
}

/* The synthetic icon-theme.cache of `theme`, in step with its index.theme
 * and listings (the same sizes and the same cached name lists). */
static int icon_cache_build(struct tree *t, struct tree_ctx *x,
			    const char *theme, GByteArray *out)
{
	g_autoptr(GArray) sizes = NULL;
	g_autoptr(GPtrArray) dirs = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) names = NULL, svg = NULL;
	g_autoptr(GPtrArray) png = g_ptr_array_new();
	int r;

	r = theme_sizes(x, theme, &sizes);
	if (r >= 0)
		r = theme_names(t, x, theme, false, &names);
	if (r >= 0)
		r = theme_names(t, x, theme, true, &svg);
	if (r < 0)
		return r;
	for (unsigned scale = 1; scale <= 2; scale++)
		for (unsigned i = 0; i < sizes->len; i++) {
			int s = g_array_index(sizes, int, i);
			g_ptr_array_add(
				dirs,
				scale == 1 ? g_strdup_printf("%dx%d", s, s)
					   : g_strdup_printf("%dx%d@2", s, s));
		}
	g_ptr_array_add(dirs, g_strdup("scalable"));
	for (unsigned i = 0; i < names->len; i++)
		if (!view_is_symbolic(names->pdata[i]))
			g_ptr_array_add(png, names->pdata[i]);
	iconcache_build(dirs, png, svg, out);
	return 0;
}

/* The same, built once per theme and index generation. */
static int icon_cache_bytes(struct tree *t, struct tree_ctx *x,
			    const char *theme, GBytes **ret)
{
	GByteArray *built;
	GBytes *bytes;
	int r;

	uint64_t gen;

	pthread_mutex_lock(&t->lock);
	gen = t->generation;
	bytes = g_hash_table_lookup(t->icon_caches, theme);
	if (bytes)
		g_bytes_ref(bytes);
	pthread_mutex_unlock(&t->lock);
	if (bytes) {
		*ret = bytes;
		return 0;
	}
	built = g_byte_array_new();
	r = icon_cache_build(t, x, theme, built);
	if (r < 0) {
		g_byte_array_unref(built);
		return r;
	}
	bytes = g_byte_array_free_to_bytes(built);
	pthread_mutex_lock(&t->lock);
	if (t->generation == gen)
		g_hash_table_replace(t->icon_caches, g_strdup(theme),
				     g_bytes_ref(bytes));
	pthread_mutex_unlock(&t->lock);
	*ret = bytes;
	return 0;
}

void tree_warm(struct tree *t, struct tree_ctx *x)
{
	const char *themes[] = { t->default_theme, "hicolor" };

	for (size_t i = 0; i < G_N_ELEMENTS(themes); i++) {
		g_autoptr(GBytes) bytes = NULL;
		(void)icon_cache_bytes(t, x, themes[i], &bytes);
	}
}

/* Resolve an icon file: NODE_ICON at size·scale pixels, NODE_SVG as the SVG
 * its nominal-size lookup picks. */
static int resolve_icon(struct tree *t, struct tree_ctx *x, enum node_kind kind,
			const char *theme, const char *name, int size,
			int scale, struct icon_content *ret)
{
	g_autofree char *source = NULL;
	int ext, r;

	if (kind == NODE_SVG) {
		r = lookup_icon(x->l, theme, name, view_nominal_size(name), 1,
				&source, &ext);
		if (r < 0)
			return r;
		if (ext != RASTER_SVG)
			return -ENOENT;
		return content_resolve(t->content, x->db, source, ext, 0, ret);
	}
	r = lookup_icon(x->l, theme, name, size, scale, &source, &ext);
	if (r < 0)
		return r;
	r = content_resolve(t->content, x->db, source, ext,
			    (unsigned)(size * scale), ret);
	/* A source that cannot be rendered is an I/O error on that file;
	 * everything else missing is simply not there. */
	return r == -EIO ? -EIO : r < 0 ? -ENOENT : 0;
}

/* What `name` in directory `p` would be, from the name grammar alone (no
 * index): the child's kind, theme, size, scale and icon name. */
static int child_parse(struct tree *t, const struct node_view *p,
		       const char *name, enum node_kind *ret_kind,
		       char **ret_theme, int *ret_size, int *ret_scale,
		       char **ret_name)
{
	int size = 0, scale = 0, r;

	*ret_theme = NULL;
	*ret_name = NULL;
	switch (p->kind) {
	case NODE_ROOT:
		if (streq(name, "icons")) {
			*ret_kind = NODE_ICONS;
			break;
		}
		if (view_parse_flat_dir(name, &size, &scale) < 0)
			return -ENOENT;
		*ret_kind = NODE_FLATDIR;
		*ret_theme = g_strdup(t->default_theme);
		break;
	case NODE_ICONS:
		if (!lookup_name_valid(name))
			return -ENOENT;
		*ret_kind = NODE_THEME;
		*ret_theme = g_strdup(name);
		break;
	case NODE_THEME:
		*ret_theme = g_strdup(p->theme);
		if (streq(name, "index.theme"))
			*ret_kind = NODE_INDEX_THEME;
		else if (streq(name, "icon-theme.cache"))
			*ret_kind = NODE_ICON_CACHE;
		else if (streq(name, "scalable"))
			*ret_kind = NODE_SCALABLE;
		else if (view_parse_theme_dir(name, &size, &scale) == 0)
			*ret_kind = NODE_SIZEDIR;
		else
			return -ENOENT;
		break;
	case NODE_SIZEDIR:
	case NODE_FLATDIR:
	case NODE_SCALABLE:
		r = view_parse_icon_file(
			name, p->kind == NODE_SCALABLE ? "svg" : "png",
			ret_name);
		if (r < 0)
			return r;
		if (p->kind == NODE_SIZEDIR && view_is_symbolic(*ret_name))
			return -ENOENT;
		*ret_kind = p->kind == NODE_SCALABLE ? NODE_SVG : NODE_ICON;
		*ret_theme = g_strdup(p->theme);
		size = p->size;
		scale = p->scale;
		break;
	default:
		return -ENOTDIR;
	}
	*ret_size = size;
	*ret_scale = scale;
	return 0;
}

int tree_lookup(struct tree *t, struct tree_ctx *x, uint64_t parent,
		const char *name, uint64_t *ret_ino, struct stat *ret_st,
		double *ret_negative_timeout)
{
	uint64_t gen = tree_generation(t);
	struct node_view p = { 0 };
	g_autofree char *theme = NULL, *icon = NULL;
	struct icon_content content = { 0 };
	enum node_kind kind;
	int size, scale, r;

	atomic_fetch_add(&t->counters.lookups, 1);
	r = node_view_get(t, parent, &p);
	if (r < 0)
		return r;
	r = child_parse(t, &p, name, &kind, &theme, &size, &scale, &icon);
	node_view_clear(&p);
	if (r >= 0 && kind == NODE_THEME)
		r = theme_exists(x, theme);
	if (r >= 0 && (kind == NODE_ICON || kind == NODE_SVG))
		r = resolve_icon(t, x, kind, theme, icon, size, scale,
				 &content);
	if (r >= 0 && (kind == NODE_INDEX_THEME || kind == NODE_ICON_CACHE)) {
		g_autoptr(GString) text = g_string_new(NULL);
		g_autoptr(GBytes) cache = NULL;

		if (kind == NODE_INDEX_THEME) {
			r = index_theme_text(x, theme, text);
			content.size = text->len;
		} else {
			r = icon_cache_bytes(t, x, theme, &cache);
			content.size = r < 0 ? 0 : g_bytes_get_size(cache);
		}
		pthread_mutex_lock(&t->lock);
		content.mtime = t->refreshed;
		pthread_mutex_unlock(&t->lock);
	}
	if (r < 0) {
		if (r == -ENOENT) {
			atomic_fetch_add(&t->counters.negative, 1);
			*ret_negative_timeout =
				negative_note(t, parent, name, gen);
		}
		icon_content_clear(&content);
		return r;
	}
	*ret_ino = node_ref(t, parent, name, kind, theme, size, scale, icon,
			    kind_is_dir(kind) ? NULL : &content, ret_st);
	icon_content_clear(&content);
	return 0;
}

static void listing_add(struct tree_listing *ls, char *name, unsigned char type)
{
	g_ptr_array_add(ls->names, name);
	g_array_append_val(ls->types, type);
}

void tree_listing_free(struct tree_listing *ls)
{
	if (!ls)
		return;
	g_ptr_array_unref(ls->names);
	g_array_unref(ls->types);
	if (ls->inos)
		g_array_unref(ls->inos);
	g_free(ls);
}

/* Give every entry of a listing of `v` the inode number its lookup gives
 * (d_ino == st_ino). */
static void listing_number(struct tree *t, const struct node_view *v,
			   struct tree_listing *ls)
{
	ls->inos = g_array_sized_new(FALSE, FALSE, sizeof(uint64_t),
				     ls->names->len);
	pthread_mutex_lock(&t->lock);
	for (unsigned i = 0; i < ls->names->len; i++) {
		g_autofree char *theme = NULL, *name = NULL, *key = NULL;
		enum node_kind kind;
		int size, scale;
		uint64_t ino;

		if (i < 2)
			ino = i == 0 ? v->ino : v->parent;
		else if (child_parse(t, v, ls->names->pdata[i], &kind, &theme,
				     &size, &scale, &name) < 0)
			ino = 0;
		else {
			key = node_key(kind, theme, size, scale, name);
			ino = ino_for_key_locked(t, key);
		}
		g_array_append_val(ls->inos, ino);
	}
	pthread_mutex_unlock(&t->lock);
}

/* The icon names listed in a theme's size views (all names resolvable in
 * its chain) or, with `svg`, in its scalable/ (those whose nominal lookup
 * is an SVG). Cached per theme; returns a new reference. */
static int theme_names(struct tree *t, struct tree_ctx *x, const char *theme,
		       bool svg, GPtrArray **ret)
{
	g_autofree char *key = g_strconcat(theme, svg ? "/svg" : "", NULL);
	GPtrArray *names;
	int r;

	uint64_t gen;

	pthread_mutex_lock(&t->lock);
	gen = t->generation;
	names = g_hash_table_lookup(t->names_cache, key);
	if (names)
		g_ptr_array_ref(names);
	pthread_mutex_unlock(&t->lock);
	if (names) {
		*ret = names;
		return 0;
	}

	r = lookup_names(x->l, theme, &names);
	if (r < 0)
		return r;
	if (svg) {
		GPtrArray *all = names;

		names = g_ptr_array_new_with_free_func(g_free);
		for (unsigned i = 0; i < all->len; i++) {
			const char *n = all->pdata[i];
			g_autofree char *src = NULL;
			int ext;

			if (lookup_icon(x->l, theme, n, view_nominal_size(n), 1,
					&src, &ext) == 0 &&
			    ext == RASTER_SVG)
				g_ptr_array_add(names, g_strdup(n));
		}
		g_ptr_array_unref(all);
	}
	pthread_mutex_lock(&t->lock);
	if (t->generation == gen)
		g_hash_table_replace(t->names_cache, g_steal_pointer(&key),
				     g_ptr_array_ref(names));
	pthread_mutex_unlock(&t->lock);
	*ret = names;
	return 0;
}

void tree_flush(struct tree *t)
{
	pthread_mutex_lock(&t->lock);
	t->generation++;
	g_hash_table_remove_all(t->names_cache);
	g_hash_table_remove_all(t->icon_caches);
	pthread_mutex_unlock(&t->lock);
}

static int list_icons(struct tree *t, struct tree_ctx *x,
		      const struct node_view *v, struct tree_listing *ls)
{
	bool svg = v->kind == NODE_SCALABLE;
	g_autoptr(GPtrArray) names = NULL;
	int r;

	r = theme_names(t, x, v->theme, svg, &names);
	if (r < 0)
		return r;
	for (unsigned i = 0; i < names->len; i++) {
		const char *n = names->pdata[i];

		if (v->kind == NODE_SIZEDIR && view_is_symbolic(n))
			continue;
		listing_add(ls, g_strconcat(n, svg ? ".svg" : ".png", NULL),
			    DT_REG);
	}
	return 0;
}

static int tree_list_once(struct tree *t, struct tree_ctx *x, uint64_t ino,
			  struct tree_listing **ret);


/* A listing built while the index changed under it is built again: the
 * kernel caches what it gets, and the invalidation may already be past. */
int tree_list(struct tree *t, struct tree_ctx *x, uint64_t ino,
	      struct tree_listing **ret)
{
	for (int tries = 0;; tries++) {
		uint64_t gen = tree_generation(t);
		int r = tree_list_once(t, x, ino, ret);

		if (r < 0 || tree_generation(t) == gen || tries == 8)
			return r;
		tree_listing_free(*ret);
	}
}

static int tree_list_once(struct tree *t, struct tree_ctx *x, uint64_t ino,
			  struct tree_listing **ret)
{
	struct tree_listing *ls = g_new0(struct tree_listing, 1);
	struct node_view v = { 0 };
	g_autoptr(GPtrArray) themes = NULL;
	g_autoptr(GArray) sizes = NULL;
	int r;

	atomic_fetch_add(&t->counters.readdirs, 1);
	r = node_view_get(t, ino, &v);
	if (r < 0) {
		g_free(ls);
		return r;
	}
	ls->names = g_ptr_array_new_with_free_func(g_free);
	ls->types = g_array_new(FALSE, FALSE, 1);
	listing_add(ls, g_strdup("."), DT_DIR);
	listing_add(ls, g_strdup(".."), DT_DIR);

	switch (v.kind) {
	case NODE_ROOT:
		listing_add(ls, g_strdup("icons"), DT_DIR);
		for (int s = 1; s <= 2; s++)
			for (unsigned i = 0; i < view_n_listed_sizes; i++)
				listing_add(
					ls,
					s == 1 ? g_strdup_printf(
							 "%d",
							 view_listed_sizes[i])
					       : g_strdup_printf(
							 "%d@%d",
							 view_listed_sizes[i],
							 s),
					DT_DIR);
		break;
	case NODE_ICONS:
		r = lookup_themes(x->l, &themes);
		for (unsigned i = 0; r >= 0 && i < themes->len; i++)
			listing_add(ls, g_strdup(themes->pdata[i]), DT_DIR);
		break;
	case NODE_THEME:
		listing_add(ls, g_strdup("index.theme"), DT_REG);
		listing_add(ls, g_strdup("icon-theme.cache"), DT_REG);
		listing_add(ls, g_strdup("scalable"), DT_DIR);
		r = theme_sizes(x, v.theme, &sizes);
		for (unsigned i = 0; r >= 0 && i < sizes->len; i++) {
			int s = g_array_index(sizes, int, i);
			listing_add(ls, g_strdup_printf("%dx%d", s, s), DT_DIR);
			listing_add(ls, g_strdup_printf("%dx%d@2", s, s),
				    DT_DIR);
		}
		break;
	case NODE_SIZEDIR:
	case NODE_FLATDIR:
	case NODE_SCALABLE:
		r = list_icons(t, x, &v, ls);
		break;
	default:
		r = -ENOTDIR;
	}
	if (r >= 0)
		listing_number(t, &v, ls);
	node_view_clear(&v);
	if (r < 0) {
		tree_listing_free(ls);
		return r;
	}
	*ret = ls;
	return 0;
}

int tree_open(struct tree *t, struct tree_ctx *x, uint64_t ino,
	      struct tree_file **ret)
{
	struct tree_file *f = g_new0(struct tree_file, 1);
	struct icon_content ic = { 0 };
	struct node_view v = { 0 };
	struct node *n;
	int r;

	atomic_fetch_add(&t->counters.opens, 1);
	f->fd = -1;
	pthread_mutex_lock(&t->lock);
	n = g_hash_table_lookup(t->by_ino, &ino);
	if (n) {
		n->used = ++t->clock;
		v = node_view_of(n);
		ic = n->content;
		ic.source = g_strdup(n->content.source);
	}
	pthread_mutex_unlock(&t->lock);
	if (!n) {
		g_free(f);
		return -ESTALE;
	}

	if (v.kind == NODE_INDEX_THEME) {
		GString *text = g_string_new(NULL);

		r = index_theme_text(x, v.theme, text);
		f->len = text->len;
		f->data = g_string_free(text, FALSE);
	} else if (v.kind == NODE_ICON_CACHE) {
		g_autoptr(GBytes) cache = NULL;

		r = icon_cache_bytes(t, x, v.theme, &cache);
		if (r >= 0) {
			f->data = g_memdup2(g_bytes_get_data(cache, &f->len),
					    g_bytes_get_size(cache));
		}
	} else if (kind_is_dir(v.kind)) {
		r = -EISDIR;
	} else if (ic.native) {
		r = content_open_source(t->content, ic.source);
		f->fd = r;
	} else {
		r = content_load(t->content, x->db, &ic, &f->data, &f->len);
	}
	node_view_clear(&v);
	icon_content_clear(&ic);
	if (r < 0) {
		tree_file_free(f);
		return r;
	}
	*ret = f;
	return 0;
}

ssize_t tree_read(struct tree_file *f, void *buf, size_t size, off_t off)
{
	ssize_t n;

	if (off < 0)
		return -EINVAL;
	if (f->fd >= 0) {
		n = pread(f->fd, buf, size, off);
		return n < 0 ? -errno : n;
	}
	if ((size_t)off >= f->len)
		return 0;
	n = (ssize_t)(f->len - off < size ? f->len - off : size);
	memcpy(buf, (const char *)f->data + off, n);
	return n;
}

void tree_file_free(struct tree_file *f)
{
	if (!f)
		return;
	if (f->fd >= 0)
		(void)close(f->fd);
	free(f->data);
	g_free(f);
}

#define XATTR_SOURCE   "user.iconfs.source"
#define XATTR_COUNTERS "user.iconfs.counters"
#define XATTR_THEME    "user.iconfs.theme"

static char *counters_text(struct tree *t)
{
	struct content_counters *c = content_counters(t->content);

	return g_strdup_printf(
		"lookups %llu\nnegative %llu\ngetattrs %llu\nopens %llu\n"
		"reads %llu\nreaddirs %llu\nrenders %llu\n"
		"render_failures %llu\nblob_hits %llu\nnative %llu\n"
		"cache_errors %llu\nworker_restarts %llu\nnodes %u\n"
		"negatives %u\ninvalidations %llu\n",
		(unsigned long long)t->counters.lookups,
		(unsigned long long)t->counters.negative,
		(unsigned long long)t->counters.getattrs,
		(unsigned long long)t->counters.opens,
		(unsigned long long)t->counters.reads,
		(unsigned long long)t->counters.readdirs,
		(unsigned long long)c->renders,
		(unsigned long long)c->render_failures,
		(unsigned long long)c->blob_hits, (unsigned long long)c->native,
		(unsigned long long)c->cache_errors,
		content_worker_restarts(t->content),
		g_hash_table_size(t->by_ino), g_hash_table_size(t->negatives),
		(unsigned long long)t->counters.invalidations);
}

int tree_getxattr(struct tree *t, uint64_t ino, const char *name,
		  char **ret_value)
{
	struct node *n;
	char *v = NULL;

	if (ino == TREE_ROOT_INO && streq(name, XATTR_COUNTERS)) {
		pthread_mutex_lock(&t->lock);
		v = counters_text(t);
		pthread_mutex_unlock(&t->lock);
	} else if (ino == TREE_ROOT_INO && streq(name, XATTR_THEME)) {
		v = g_strdup(t->default_theme);
	} else if (streq(name, XATTR_SOURCE)) {
		pthread_mutex_lock(&t->lock);
		n = g_hash_table_lookup(t->by_ino, &ino);
		if (n && n->content.source)
			v = g_strdup(n->content.source);
		pthread_mutex_unlock(&t->lock);
	}
	if (!v)
		return -ENODATA;
	*ret_value = v;
	return 0;
}

int tree_listxattr(struct tree *t, uint64_t ino, GString *out)
{
	struct node *n;

	pthread_mutex_lock(&t->lock);
	n = g_hash_table_lookup(t->by_ino, &ino);
	if (ino == TREE_ROOT_INO) {
		g_string_append_len(out, XATTR_COUNTERS,
				    sizeof(XATTR_COUNTERS));
		g_string_append_len(out, XATTR_THEME, sizeof(XATTR_THEME));
	} else if (n && n->content.source)
		g_string_append_len(out, XATTR_SOURCE, sizeof(XATTR_SOURCE));
	pthread_mutex_unlock(&t->lock);
	return 0;
}

static void inval_add(GArray *out, uint64_t ino, uint64_t parent,
		      const char *name)
{
	struct tree_inval v = { ino, parent, g_strdup(name) };
	g_array_append_val(out, v);
}

/* The icon (or theme) name an entry stands for: "x.png" and "x.svg" stand
 * for x, any other entry for itself. */
static bool entry_named(const char *entry, GHashTable *names)
{
	const char *dot = strrchr(entry, '.');
	g_autofree char *stem = NULL;

	if (dot && (streq(dot, ".png") || streq(dot, ".svg")))
		stem = g_strndup(entry, dot - entry);
	return g_hash_table_contains(names, stem ? stem : entry);
}

void tree_collect_invalidations(struct tree *t, GHashTable *names, bool all,
				GArray *out)
{
	GHashTableIter it;
	struct negative *neg;
	struct node *n;

	/* Only what the kernel holds: the nodes it looked up and the misses
	 * it was told to cache; O(nodes + misses), whatever the index holds. */
	pthread_mutex_lock(&t->lock);
	t->generation++;
	g_hash_table_remove_all(t->names_cache);
	g_hash_table_remove_all(t->icon_caches);
	g_hash_table_iter_init(&it, t->by_key);
	while (g_hash_table_iter_next(&it, NULL, (void **)&n)) {
		/* Directories (attributes, cached listings) and the synthetic
		 * index.theme and cache follow every change; icon files when
		 * their name changed. */
		bool synthetic = n->kind == NODE_INDEX_THEME ||
				 n->kind == NODE_ICON_CACHE;
		bool named = n->name && g_hash_table_contains(names, n->name);

		if (all || kind_is_dir(n->kind) || synthetic || named)
			inval_add(out, n->ino, 0, NULL);
		if (all || synthetic || named)
			inval_add(out, 0, n->parent, n->entry);
	}
	g_hash_table_iter_init(&it, t->negatives);
	while (g_hash_table_iter_next(&it, NULL, (void **)&neg)) {
		if (!all && !entry_named(neg->entry, names))
			continue;
		inval_add(out, 0, neg->parent, neg->entry);
		g_hash_table_iter_remove(&it);
	}
	inval_add(out, TREE_ROOT_INO, 0, NULL);
	pthread_mutex_unlock(&t->lock);
}

void tree_inval_clear(GArray *invals)
{
	for (unsigned i = 0; i < invals->len; i++)
		g_free(g_array_index(invals, struct tree_inval, i).name);
	g_array_set_size(invals, 0);
}

static int node_used_cmp(const void *a, const void *b)
{
	const struct node *x = *(struct node *const *)a;
	const struct node *y = *(struct node *const *)b;

	return x->used < y->used ? -1 : x->used > y->used;
}

void tree_collect_evictions(struct tree *t, unsigned max_nodes, GArray *out)
{
	g_autoptr(GPtrArray) files = NULL;
	GHashTableIter it;
	struct node *n;
	unsigned count, drop;

	pthread_mutex_lock(&t->lock);
	count = g_hash_table_size(t->by_ino);
	if (count <= max_nodes) {
		pthread_mutex_unlock(&t->lock);
		return;
	}
	files = g_ptr_array_sized_new(count);
	g_hash_table_iter_init(&it, t->by_ino);
	while (g_hash_table_iter_next(&it, NULL, (void **)&n))
		if (!kind_is_dir(n->kind))
			g_ptr_array_add(files, n);
	g_ptr_array_sort(files, node_used_cmp);
	/* down to 90%, so that this does not run on every check */
	drop = MIN(files->len, count - max_nodes / 10 * 9);
	for (unsigned i = 0; i < drop; i++) {
		n = files->pdata[i];
		inval_add(out, 0, n->parent, n->entry);
	}
	pthread_mutex_unlock(&t->lock);
}
