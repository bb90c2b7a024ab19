/* The mounted tree's nodes; see tree.h. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "index.h"
#include "log.h"
#include "resolved.h"
#include "tree.h"
#include "tree-private.h"
#include "view.h"

/* What a node holds in memory: its strings, its content's sources (with
 * `content`) and two hash table entries, with malloc's overhead. */
static size_t node_bytes(const struct node *n,
			 const struct icon_content *content)
{
	size_t b = sizeof(*n) + strlen(n->entry) + TREE_NODE_OVERHEAD;

	if (content)
		b += (n->name ? strlen(n->name) : 0) +
		     (content->source ? strlen(content->source) : 0) +
		     (content->stored.source ? strlen(content->stored.source) : 0);
	return b;
}

static void node_free(struct node *n)
{
	g_free(n->name);
	g_free(n->entry);
	icon_content_clear(&n->content);
	g_free(n);
}

/* A node's inode number is a hash of its key, so that a listing can give
 * each entry the d_ino its lookup will give (FNV-1a; 0 and the root's 1
 * are skipped). A collision, vanishingly rare, moves a node to the next
 * free number: its listed d_ino then differs, nothing else. */
#define FNV_OFFSET 0xcbf29ce484222325ULL

/* FNV-1a over `s` (`n` bytes, or up to its NUL when n is -1), going on
 * from `h`: a key's hash can be taken in parts. */
static uint64_t fnv(uint64_t h, const char *s, ssize_t n)
{
	for (const unsigned char *p = (const unsigned char *)s;
	     n < 0 ? *p != 0 : p < (const unsigned char *)s + n; p++)
		h = (h ^ *p) * 0x100000001b3ULL;
	return h;
}

static uint64_t ino_of_hash(uint64_t h)
{
	return h > TREE_ROOT_INO ? h : h + TREE_ROOT_INO + 1;
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

/* A node is one entry of one directory: the same icon under MNT/48/ and
 * MNT/icons/<default theme>/48x48/ is two nodes, each invalidated under
 * its own parent when it changes. Its key is (parent, kind, theme, size,
 * scale, name), hashed as the text of its fields joined by \x1f, the name
 * last: the hash of everything before the name is common to a directory's
 * icons. */
static uint64_t key_prefix_hash(uint64_t parent, enum tree_kind kind,
				const char *theme, int size, int scale)
{
	g_autofree char *prefix =
		g_strdup_printf("%" PRIu64 "\x1f%d\x1f%s\x1f%d\x1f%d\x1f",
				parent, kind, or_empty(theme), size, scale);

	return fnv(FNV_OFFSET, prefix, -1);
}

/* A node to look the key up with in tree.by_key (no copy of the strings:
 * the key is 8 bytes of hash in a node, not a string of its own). */
static struct node key_probe(uint64_t parent, enum tree_kind kind,
			     const char *theme, int size, int scale,
			     const char *name)
{
	return (struct node){
		.parent = parent,
		.kind = kind,
		.theme = theme,
		.size = size,
		.scale = scale,
		.name = (char *)name,
		.hash = fnv(key_prefix_hash(parent, kind, theme, size, scale),
			    or_empty(name), -1),
	};
}

static guint key_hash(gconstpointer p)
{
	return (guint)((const struct node *)p)->hash;
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
	const struct node *x = a, *y = b;

	return x->hash == y->hash && x->parent == y->parent &&
	       x->kind == y->kind && x->size == y->size &&
	       x->scale == y->scale &&
	       strcmp(or_empty(x->theme), or_empty(y->theme)) == 0 &&
	       strcmp(or_empty(x->name), or_empty(y->name)) == 0;
}

/* The inode number of the node with the key of `probe`, whether or not it
 * exists yet; lock. */
static uint64_t ino_for_key_locked(struct tree *t, const struct node *probe)
{
	struct node *n = g_hash_table_lookup(t->by_key, probe);

	return n ? n->ino : ino_of_hash(probe->hash);
}

int tree_new(const char *default_theme, const char *source,
	     enum lookup_rules rules, struct tree **ret)
{
	struct tree *t = g_new0(struct tree, 1);

	t->rules = rules;
	t->default_theme = g_strdup(default_theme);
	t->default_source = g_strdup(source);
	pthread_mutex_init(&t->theme_lock, NULL);
	t->uid = getuid();
	t->gid = getgid();
	pthread_mutex_init(&t->lock, NULL);
	clock_gettime(CLOCK_REALTIME, &t->refreshed);
	t->by_ino = g_hash_table_new(g_int64_hash, g_int64_equal);
	t->by_key = g_hash_table_new(key_hash, key_equal);
	t->negatives =
		g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	t->pressure_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	t->bound = TREE_NODES_BYTES;
	t->root.ino = TREE_ROOT_INO;
	t->root.kind = TREE_ROOT;
	t->root.nlookup = 1;
	g_hash_table_insert(t->by_ino, &t->root.ino, &t->root);
	*ret = t;
	return 0;
}

enum lookup_rules tree_rules(struct tree *t)
{
	return t->rules;
}

unsigned tree_content_flags(struct tree *t, enum tree_kind dir)
{
	return t->rules == LOOKUP_RULES_QT && dir == TREE_SIZEDIR
		       ? CONTENT_SMALLER_AS_IS
		       : 0;
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
	g_hash_table_destroy(t->negatives);
	if (t->pressure_fd >= 0)
		close(t->pressure_fd);
	pthread_mutex_destroy(&t->lock);
	g_free(t->default_theme);
	g_free(t->default_source);
	pthread_mutex_destroy(&t->theme_lock);
	g_free(t);
	return NULL;
}

char *tree_default_theme(struct tree *t)
{
	char *theme;

	pthread_mutex_lock(&t->theme_lock);
	theme = g_strdup(t->default_theme);
	pthread_mutex_unlock(&t->theme_lock);
	return theme;
}

/* The kernel will cache the miss of `entry` in `parent`: remember it, so
 * that a change can invalidate exactly the misses the kernel holds. A miss
 * answered from an index that changed meanwhile, or past the bound, is
 * only cached briefly. Returns the entry timeout to reply with. */
static double negative_note(struct tree *t, struct request *x, uint64_t parent,
			    const char *entry)
{
	g_autofree char *key = g_strdup_printf("%" PRIu64 "/%s", parent, entry);
	double timeout = TREE_TIMEOUT;

	pthread_mutex_lock(&t->lock);
	if (generation_now(x->generation) != x->generation_seen)
		timeout = TREE_NEGATIVE_BRIEF;
	else if (!g_hash_table_contains(t->negatives, key)) {
		if (g_hash_table_size(t->negatives) >= TREE_NEGATIVES_MAX)
			timeout = TREE_NEGATIVE_BRIEF;
		else
			g_hash_table_add(t->negatives, g_steal_pointer(&key));
	}
	pthread_mutex_unlock(&t->lock);
	return timeout;
}

/* lock */
static struct tree_node node_copy(const struct node *n)
{
	struct tree_node c = {
		.kind = n->kind,
		.theme = g_strdup(n->theme),
		.size = n->size,
		.scale = n->scale,
		.name = g_strdup(n->name),
		.ino = n->ino,
		.parent = n->parent ? n->parent : TREE_ROOT_INO,
		.content = n->content,
	};

	c.content.source = g_strdup(n->content.source);
	c.content.stored.source = g_strdup(n->content.stored.source);
	return c;
}

/* The node of `ino`, its use noted (the node table's eviction takes the
 * least recently used); NULL for an unknown ino. lock. */
static struct node *node_use_locked(struct tree *t, uint64_t ino)
{
	struct node *n = g_hash_table_lookup(t->by_ino, &ino);

	if (n)
		n->used = ++t->clock;
	return n;
}


void tree_node_clear(struct tree_node *n)
{
	g_free(n->theme);
	g_free(n->name);
	icon_content_clear(&n->content);
	*n = (struct tree_node){ 0 };
}

static void fill_stat(struct tree *t, const struct node *n, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = n->ino;
	st->st_uid = t->uid;
	st->st_gid = t->gid;
	st->st_blksize = 4096;
	if (tree_kind_is_dir(n->kind)) {
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

/* Find or make the node for (kind, theme, size, scale, name), take one
 * kernel reference, replace its content with *content (taken over) and
 * return its attributes, and whether its size is still unknown. */
static uint64_t node_ref(struct tree *t, uint64_t parent, const char *entry,
			 enum tree_kind kind, const char *theme, int size,
			 int scale, const char *name,
			 struct icon_content *content, struct stat *ret_st,
			 bool *ret_unsized)
{
	struct node probe = key_probe(parent, kind, theme, size, scale, name);
	struct node *n;
	uint64_t ino;

	pthread_mutex_lock(&t->lock);
	n = g_hash_table_lookup(t->by_key, &probe);
	if (!n) {
		n = g_new0(struct node, 1);
		n->ino = ino_of_hash(probe.hash);
		while (n->ino <= TREE_ROOT_INO ||
		       g_hash_table_contains(t->by_ino, &n->ino))
			n->ino++;
		n->kind = kind;
		n->theme = theme ? g_intern_string(theme) : NULL;
		n->size = size;
		n->scale = scale;
		n->name = g_strdup(name);
		n->parent = parent;
		n->entry = g_strdup(entry);
		n->hash = probe.hash;
		g_hash_table_add(t->by_key, n);
		g_hash_table_insert(t->by_ino, &n->ino, n);
	}
	if (content || !n->bytes) {
		t->bytes -= n->bytes;
		n->bytes = node_bytes(n, content);
		t->bytes += n->bytes;
		if (t->bytes > t->bound + TREE_SLACK(t->bound) && !t->pressed &&
		    t->pressure_fd >= 0) {
			t->pressed = true;
			(void)eventfd_write(t->pressure_fd, 1);
		}
	}
	n->nlookup++;
	n->used = ++t->clock;
	/* a deferred lookup never forgets a size known already of the same
	 * source bytes (a render made and not stored yet) */
	if (content && content->unsized && !n->content.unsized &&
	    icon_content_same(&n->content, content))
		icon_content_clear(content);
	else if (content) {
		icon_content_clear(&n->content);
		n->content = *content;
		*content = (struct icon_content){ 0 };
		n->mtime = n->content.mtime;
	}
	fill_stat(t, n, ret_st);
	ino = n->ino;
	if (ret_unsized)
		*ret_unsized = n->content.unsized;
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
			g_hash_table_remove(t->by_key, n);
			t->bytes -= n->bytes;
			node_free(n);
		}
	}
	pthread_mutex_unlock(&t->lock);
}

char *tree_path(struct tree *t, uint64_t ino)
{
	GPtrArray *parts = g_ptr_array_new();
	char *path = NULL;
	struct node *n;

	pthread_mutex_lock(&t->lock);
	while (ino != TREE_ROOT_INO &&
	       (n = g_hash_table_lookup(t->by_ino, &ino))) {
		g_ptr_array_insert(parts, 0, n->entry);
		ino = n->parent ? n->parent : TREE_ROOT_INO;
	}
	if (ino == TREE_ROOT_INO && parts->len > 0) {
		g_ptr_array_add(parts, NULL);
		path = g_strjoinv("/", (char **)parts->pdata);
	}
	pthread_mutex_unlock(&t->lock);
	g_ptr_array_free(parts, TRUE);
	return path;
}

int tree_node_get(struct tree *t, uint64_t ino, struct tree_node *ret,
		  struct stat *ret_st)
{
	struct node *n;

	pthread_mutex_lock(&t->lock);
	n = node_use_locked(t, ino);
	if (n && ret)
		*ret = node_copy(n);
	if (n && ret_st)
		fill_stat(t, n, ret_st);
	pthread_mutex_unlock(&t->lock);
	return n ? 0 : -ESTALE;
}

/* Render node `ino`'s unsized content into its node: 1 when it took it,
 * 0 when there was nothing to do (gone, or sized by now), or -errno. */
static int node_settle_once(struct tree *t, struct request *x,
			    enum request_mode mode, uint64_t ino)
{
	g_autofree char *source = NULL;
	struct icon_content c = { 0 };
	struct node *node;
	unsigned px = 0;
	int ext = 0, r;

	pthread_mutex_lock(&t->lock);
	node = g_hash_table_lookup(t->by_ino, &ino);
	if (node && node->content.unsized) {
		source = g_strdup(node->content.source);
		ext = node->content.ext;
		px = node->content.px;
	}
	pthread_mutex_unlock(&t->lock);
	if (!source)
		return 0;
	/* what the lookup found, rendered now (a native file is never
	 * unsized) */
	r = content_resolve(x->content, x->blobs, source, ext, px,
			    request_content_flags(mode), &c);
	if (r == 0 && c.unsized)
		r = -EAGAIN;
	if (r < 0)
		return r == -EIO || r == -EAGAIN ? r : -ENOENT;
	pthread_mutex_lock(&t->lock);
	node = g_hash_table_lookup(t->by_ino, &ino);
	/* unless another request sized it meanwhile, or a lookup gave it
	 * another source */
	r = node && node->content.unsized && node->content.px == c.px &&
	    streq(node->content.source, c.source);
	if (r) {
		icon_content_clear(&node->content);
		node->content = c;
		c = (struct icon_content){ 0 };
		node->mtime = node->content.mtime;
		t->bytes -= node->bytes;
		node->bytes = node_bytes(node, &node->content);
		t->bytes += node->bytes;
	}
	pthread_mutex_unlock(&t->lock);
	icon_content_clear(&c);
	return r;
}

int tree_node_settle(struct tree *t, struct request *x,
		     enum request_mode mode, uint64_t ino, struct tree_node *ret,
		     struct stat *ret_st)
{
	struct tree_node n = { 0 };
	int r;

	/* a node whose source a lookup changed while it rendered is tried
	 * again, with the new one */
	for (int tries = 0;; tries++) {
		r = node_settle_once(t, x, mode, ino);
		if (r < 0)
			return r;
		r = tree_node_get(t, ino, &n, ret_st);
		if (r < 0 || !n.content.unsized)
			break;
		tree_node_clear(&n);
		if (tries == 2)
			return -EIO;
	}
	if (r == 0 && ret)
		*ret = n;
	else
		tree_node_clear(&n);
	return r;
}

/* Whether a size view holds `name` as its SVG source's own bytes, which
 * the toolkit renders itself: under gtk a symbolic name (its per-size
 * variants), under kde and qt the names of synth_sized_svgs() (KDE
 * recolours SVGs by its colour scheme; Qt draws them with its own
 * renderer). Those are never NAME.png there. */
static bool sizedir_svg(struct tree *t, struct request *x, const char *theme,
			const char *name)
{
	g_autoptr(GPtrArray) sized = NULL;

	if (t->rules == LOOKUP_RULES_GTK)
		return view_is_symbolic(name);
	return synth_sized_svgs(x->synth, x->l, theme, &sized) == 0 &&
	       synth_list_has(sized, name);
}

/* GTK's pre-encoded NAME.symbolic.png in a size view: the theme's own file
 * of exactly that size as it is (a rescale would be another picture than
 * GTK's own of the SVG); else, under gtk, the SVG that GTK draws for NAME
 * at that size, encoded as GTK encodes it before recolouring
 * (RASTER_SYMBOLIC), so that GTK recolours it without drawing the SVG
 * (synth_symbolic_pngs() says where it is listed). The flat views render
 * NAME.symbolic like any other name. */
static int resolve_symbolic_png(struct tree *t, struct request *x,
				enum request_mode mode, const char *theme,
				const char *name, int size, int scale,
				struct icon_content *ret)
{
	g_autofree char *source = NULL, *svg = NULL, *plain = NULL;
	int ext, r;

	r = lookup_icon(x->l, theme, name, size, scale, &source, &ext);
	if (r == 0) {
		r = content_resolve(x->content, x->blobs, source, ext,
				    (unsigned)(size * scale), CONTENT_STORED_ONLY,
				    ret);
		if (r == 0 && ret->native)
			return 0;
		if (r == 0)
			icon_content_clear(ret);
		if (r == -EIO)
			return r;
	}
	if (t->rules != LOOKUP_RULES_GTK || scale != 1)
		return -ENOENT;
	plain = g_strndup(name, strlen(name) - strlen(".symbolic"));
	r = lookup_icon(x->l, theme, plain, size, 1, &svg, &ext);
	if (r < 0 || ext != ICON_EXT_SVG)
		return -ENOENT;
	r = content_resolve(x->content, x->blobs, svg, ext,
			    (unsigned)size | RASTER_SYMBOLIC,
			    request_content_flags(mode), ret);
	return r == -EIO || r == -EAGAIN ? r : r < 0 ? -ENOENT : 0;
}

/* Resolve an icon file of directory kind `dir`: TREE_ICON at size·scale
 * pixels, TREE_SVG as the SVG its nominal-size lookup picks in scalable/
 * and its size·scale lookup picks in a size view. */
static int resolve_icon(struct tree *t, struct request *x,
			enum request_mode mode, enum tree_kind dir,
			enum tree_kind kind, const char *theme, const char *name,
			int size, int scale, struct icon_content *ret)
{
	g_autofree char *source = NULL;
	int ext, r;

	if (kind == TREE_SVG) {
		/* under kde any name whose source at that size is an SVG:
		 * also those KDE reaches by a less specific name, which no
		 * listing holds (and NAME.png is not there, below) */
		if (dir == TREE_SIZEDIR && t->rules != LOOKUP_RULES_KDE &&
		    !sizedir_svg(t, x, theme, name))
			return -ENOENT;
		r = dir == TREE_SIZEDIR
			    ? lookup_icon(x->l, theme, name, size, scale,
					  &source, &ext)
			    : lookup_icon(x->l, theme, name,
					  view_nominal_size(name), 1, &source,
					  &ext);
		if (r < 0)
			return r;
		if (ext != ICON_EXT_SVG)
			return -ENOENT;
		return content_resolve(x->content, x->blobs, source, ext, 0, 0,
				       ret);
	}
	/* KDE and Qt look for NAME.png in a directory before NAME.svg */
	if (dir == TREE_SIZEDIR && !view_is_symbolic(name) &&
	    sizedir_svg(t, x, theme, name))
		return -ENOENT;
	/* resolved already by the prefetch of a listing of its view */
	if (resolved_take(x->resolved, theme, size, scale, name, x->generation_seen,
			  ret))
		return 0;
	if (dir == TREE_SIZEDIR && view_is_symbolic_png(name))
		return resolve_symbolic_png(t, x, mode, theme, name, size,
					    scale, ret);
	r = lookup_icon(x->l, theme, name, size, scale, &source, &ext);
	if (r < 0)
		return r;
	/* KDE renders and recolours an SVG itself: an SVG source is NAME.svg
	 * in a size view, never NAME.png */
	if (dir == TREE_SIZEDIR && t->rules == LOOKUP_RULES_KDE &&
	    ext == ICON_EXT_SVG)
		return -ENOENT;
	r = content_resolve(x->content, x->blobs, source, ext,
			    (unsigned)(size * scale),
			    request_content_flags(mode) |
				    tree_content_flags(t, dir),
			    ret);
	/* A source that cannot be rendered is an I/O error on that file, one
	 * not rendered yet for a REQUEST_STORED_ONLY request is for later; everything
	 * else missing is simply not there. */
	return r == -EIO || r == -EAGAIN ? r : r < 0 ? -ENOENT : 0;
}

/* What `name` in directory `p` would be, from the name grammar (view.h)
 * alone, no index query: the child's kind, theme, size, scale and icon
 * name. */
static int child_parse(struct tree *t, const struct tree_node *p,
		       const char *name, enum tree_kind *ret_kind,
		       char **ret_theme, int *ret_size, int *ret_scale,
		       char **ret_name)
{
	g_autofree char *dflt = p->kind == TREE_ROOT ? tree_default_theme(t)
						    : NULL;
	struct view_entry e;
	int r = view_parse_entry(p->kind, p->theme, p->size, p->scale, dflt,
				 name, &e);

	*ret_theme = NULL;
	*ret_name = NULL;
	if (r < 0)
		return r;
	*ret_kind = e.kind;
	*ret_theme = e.theme;
	*ret_size = e.size;
	*ret_scale = e.scale;
	*ret_name = e.name;
	return 0;
}

int tree_resolve_path(struct tree *t, struct request *x,
		      enum request_mode mode, const char *path)
{
	g_auto(GStrv) parts = g_strsplit(path, "/", -1);
	struct tree_node p = { .kind = TREE_ROOT };
	struct icon_content content = { 0 };
	int r = -ENOENT;

	for (char **c = parts; *c; c++) {
		g_autofree char *theme = NULL, *icon = NULL;
		enum tree_kind kind, dir = p.kind;
		int size, scale;

		if (child_parse(t, &p, *c, &kind, &theme, &size, &scale,
				&icon) < 0)
			break;
		g_free(p.theme);
		p = (struct tree_node){ .kind = kind,
					.theme = g_steal_pointer(&theme),
					.size = size,
					.scale = scale };
		if (kind != TREE_ICON)
			continue;
		r = c[1] ? -ENOTDIR
			 : resolve_icon(t, x, mode, dir, kind, p.theme, icon,
					size, scale, &content);
		if (r == 0)
			resolved_keep(x->resolved, p.theme, size, scale, icon,
				      x->generation_seen, &content);
		break;
	}
	g_free(p.theme);
	icon_content_clear(&content);
	return r;
}

int tree_lookup(struct tree *t, struct request *x, enum request_mode mode,
		uint64_t parent, const char *name, uint64_t *ret_ino,
		struct stat *ret_st, double *ret_negative_timeout)
{
	struct tree_node p = { 0 };
	g_autofree char *theme = NULL, *icon = NULL;
	struct icon_content content = { 0 };
	enum tree_kind kind, dir;
	bool unsized = false;
	int size, scale, r;

	r = tree_node_get(t, parent, &p, NULL);
	if (r < 0)
		return r;
	r = child_parse(t, &p, name, &kind, &theme, &size, &scale, &icon);
	dir = p.kind;
	tree_node_clear(&p);
	if (r >= 0 && kind == TREE_THEME)
		r = lookup_theme_exists(x->l, theme);
	if (r >= 0 && (kind == TREE_ICON || kind == TREE_SVG))
		r = resolve_icon(t, x, mode, dir, kind, theme, icon, size,
				 scale, &content);
	if (r >= 0 && (kind == TREE_INDEX_THEME || kind == TREE_ICON_CACHE)) {
		g_autoptr(GBytes) bytes = NULL;

		r = synth_file(x->synth, x->l, theme, tree_synth_file(kind),
			       &bytes);
		content.size = r < 0 ? 0 : g_bytes_get_size(bytes);
		pthread_mutex_lock(&t->lock);
		content.mtime = t->refreshed;
		pthread_mutex_unlock(&t->lock);
	}
	if (r < 0) {
		if (r == -ENOENT)
			*ret_negative_timeout = negative_note(t, x, parent, name);
		icon_content_clear(&content);
		return r;
	}
	*ret_ino = node_ref(t, parent, name, kind, theme, size, scale, icon,
			    tree_kind_is_dir(kind) ? NULL : &content, ret_st,
			    &unsized);
	icon_content_clear(&content);
	return unsized ? 1 : 0;
}

/* The inode numbers of the icons `icons` (names without extension) of
 * icon view `dir`: the keys differ in the name alone, so the hash of
 * their common part is taken once (find and ls walk millions of these).
 * The key is made whole only where a node already has that number (its
 * number may have moved at a collision). lock. */
static void number_icons_locked(struct tree *t, const struct tree_node *dir,
				GPtrArray *icons, GArray *inos)
{
	enum tree_kind kind = dir->kind == TREE_SCALABLE ? TREE_SVG : TREE_ICON;
	uint64_t h0 = key_prefix_hash(dir->ino, kind, dir->theme, dir->size,
				      dir->scale);

	for (unsigned i = 0; i < icons->len; i++) {
		const char *name = icons->pdata[i];
		uint64_t ino = ino_of_hash(fnv(h0, name, -1));

		if (g_hash_table_contains(t->by_ino, &ino)) {
			struct node probe =
				key_probe(dir->ino, kind, dir->theme,
					  dir->size, dir->scale, name);

			ino = ino_for_key_locked(t, &probe);
		}
		g_array_append_val(inos, ino);
	}
}

void tree_number(struct tree *t, const struct tree_node *dir, GPtrArray *names,
		 GPtrArray *icons, GArray *inos)
{
	pthread_mutex_lock(&t->lock);
	for (unsigned i = 0; i < names->len; i++) {
		g_autofree char *theme = NULL, *name = NULL;
		enum tree_kind kind;
		int size, scale;
		uint64_t ino;

		if (i < 2)
			ino = i == 0 ? dir->ino : dir->parent;
		else if (child_parse(t, dir, names->pdata[i], &kind, &theme,
				     &size, &scale, &name) < 0)
			ino = 0;
		else {
			struct node probe = key_probe(dir->ino, kind, theme,
						      size, scale, name);

			ino = ino_for_key_locked(t, &probe);
		}
		g_array_append_val(inos, ino);
	}
	if (icons)
		number_icons_locked(t, dir, icons, inos);
	pthread_mutex_unlock(&t->lock);
}

int tree_getxattr(struct tree *t, uint64_t ino, const char *name,
		  char **ret_value)
{
	struct node *n;
	char *v = NULL;

	/* Only "user." attributes exist here. ENOTSUP, not ENODATA, for the
	 * other namespaces: ls -l, file managers and backup tools then stop
	 * asking for a file's SELinux label and ACL after the first file of
	 * the mount (two round trips per file otherwise). */
	if (!g_str_has_prefix(name, "user."))
		return -ENOTSUP;
	if (ino == TREE_ROOT_INO && streq(name, VIEW_XATTR_THEME)) {
		v = tree_default_theme(t);
	} else if (ino == TREE_ROOT_INO && streq(name, VIEW_XATTR_THEME_SOURCE)) {
		pthread_mutex_lock(&t->theme_lock);
		v = g_strdup(t->default_source);
		pthread_mutex_unlock(&t->theme_lock);
	} else if (ino == TREE_ROOT_INO && streq(name, VIEW_XATTR_RULES)) {
		v = g_strdup(lookup_rules_name(t->rules));
	} else if (streq(name, VIEW_XATTR_SOURCE)) {
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
		g_string_append_len(out, VIEW_XATTR_THEME, sizeof(VIEW_XATTR_THEME));
		g_string_append_len(out, VIEW_XATTR_THEME_SOURCE,
				    sizeof(VIEW_XATTR_THEME_SOURCE));
		g_string_append_len(out, VIEW_XATTR_RULES, sizeof(VIEW_XATTR_RULES));
	} else if (n && n->content.source)
		g_string_append_len(out, VIEW_XATTR_SOURCE, sizeof(VIEW_XATTR_SOURCE));
	pthread_mutex_unlock(&t->lock);
	return 0;
}
