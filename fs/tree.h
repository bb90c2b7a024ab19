/* The mounted tree's nodes: what each inode is (the name grammar of
 * view.h applied to a directory and an entry), its attributes, and what the
 * kernel holds of it. Node lifetime follows the kernel's lookup count
 * (tree_lookup adds one, tree_forget takes them away); misses the kernel
 * was told to cache are remembered too, so that a change of the index
 * invalidates exactly what the kernel holds. Inode numbers are hashes of
 * the nodes' keys, so a listing can give each entry the d_ino its lookup
 * will give. All functions are thread-safe; those that touch the index take
 * the calling thread's struct request (request.h). */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <sqlite3.h>
#include <stdint.h>
#include <sys/stat.h>

#include "content.h"
#include "lookup.h"
#include "request.h"
#include "synth.h"
#include "view.h"

#define TREE_ROOT_INO 1

/* How long the kernel may keep entries and attributes: live updates
 * invalidate exactly what changed, so there is no reason to expire. */
#define TREE_TIMEOUT 86400.0
/* Misses the tree cannot track (past the bound, or answered while the
 * index changed) are cached this long only. */
#define TREE_NEGATIVE_BRIEF 1.0
#define TREE_NEGATIVES_MAX  16384

struct tree;

/* `source` says what chose the default theme (user.iconfs.theme-source);
 * every lookup of the mount follows `rules` (user.iconfs.rules). */
int tree_new(const char *default_theme, const char *source,
	     enum lookup_rules rules, struct tree **ret);
enum lookup_rules tree_rules(struct tree *t);

/* The synthesized file a TREE_INDEX_THEME or TREE_ICON_CACHE node holds. */
static inline enum synth_file tree_synth_file(enum tree_kind kind)
{
	return kind == TREE_INDEX_THEME ? SYNTH_INDEX_THEME : SYNTH_ICON_CACHE;
}
/* How an icon of a directory of kind `dir` is made (content_resolve's
 * flags): under qt, a size view keeps a smaller bitmap at its own size, as
 * Qt shows it. */
unsigned tree_content_flags(struct tree *t, enum tree_kind dir);
struct tree *tree_free(struct tree *t);
/* The theme of MNT/<N>/ (g_free). */
char *tree_default_theme(struct tree *t);

/* Resolve `name` in directory `parent`: on success the child's ino and
 * attributes, with one more kernel reference; 1 instead of 0 where they are
 * provisional (REQUEST_DEFER: a file not rendered yet, its size unknown
 * until tree_node_settle), not to be cached. -ENOENT for names that do not
 * exist, with the timeout the negative entry is to be cached for;
 * -ENOTDIR, -ENAMETOOLONG, -EIO. */
int tree_lookup(struct tree *t, struct request *x, enum request_mode mode,
		uint64_t parent, const char *name, uint64_t *ret_ino,
		struct stat *ret_st, double *ret_negative_timeout);
void tree_forget(struct tree *t, uint64_t ino, uint64_t nlookup);
/* Resolve the icon file at `path` (relative to the mount) as its LOOKUP
 * would, without a node, and keep the result for that LOOKUP
 * (resolved_keep): the heavy part of a lookup done ahead, on the caller's
 * thread and priority. 0, or -errno (-ENOENT for what is not an icon
 * file, -EAGAIN in REQUEST_STORED_ONLY where a render would be needed). */
int tree_resolve_path(struct tree *t, struct request *x,
		      enum request_mode mode, const char *path);
/* The node's path relative to the mount ("icons/Papirus/48x48/x.png"),
 * g_free; NULL for the root or an unknown ino. */
char *tree_path(struct tree *t, uint64_t ino);

/* A copy of a node (ret) and its attributes (ret_st), either may be NULL,
 * taken under the lock (the node may be forgotten meanwhile); counts as a
 * use. -ESTALE for an unknown ino. */
struct tree_node {
	enum tree_kind kind;
	char *theme;
	int size, scale;
	char *name; /* icon name of TREE_ICON / TREE_SVG */
	uint64_t ino, parent;
	struct icon_content content; /* files: what the lookup resolved */
};
int tree_node_get(struct tree *t, uint64_t ino, struct tree_node *ret,
		  struct stat *ret_st);
void tree_node_clear(struct tree_node *n);
/* tree_node_get() of a node whose attributes are to be exact: a file a
 * REQUEST_DEFER lookup left unsized is rendered now (in `mode`; -EAGAIN
 * in REQUEST_STORED_ONLY), -EIO where it cannot be, -ENOENT where its
 * source went. */
int tree_node_settle(struct tree *t, struct request *x,
		     enum request_mode mode, uint64_t ino, struct tree_node *ret,
		     struct stat *ret_st);

/* The inode numbers the entries `names` of directory `dir` have or will
 * have ("." and ".." first); appended to `inos` (uint64_t). */
void tree_number(struct tree *t, const struct tree_node *dir, GPtrArray *names,
		 GPtrArray *icons, GArray *inos);

/* Extended attributes: user.iconfs.source on files, user.iconfs.theme (the
 * theme of MNT/<N>/), user.iconfs.theme-source and user.iconfs.rules on the
 * root. Returns the
 * value (g_free), -ENODATA, or -ENOTSUP outside the "user." namespace.
 * The root's user.iconfs.counters is the caller's (fs.c). */
int tree_getxattr(struct tree *t, uint64_t ino, const char *name,
		  char **ret_value);
/* NUL-separated names of the node's attributes, as listxattr(2) returns. */
int tree_listxattr(struct tree *t, uint64_t ino, GString *out);
/* What the kernel holds: nodes, and misses it was told to cache. */
void tree_held(struct tree *t, unsigned *ret_nodes, unsigned *ret_negatives,
	       size_t *ret_bytes);

/* One kernel-cache invalidation: an inode (ino != 0: attributes, page cache,
 * cached listing) or an entry (name in directory parent, negative or not). */
struct tree_inval {
	uint64_t ino;
	uint64_t parent;
	char *name;
};

/* The index changed (the caller called synth_invalidate first): the
 * directories' mtime becomes `when`, and `out` gets what the kernel must
 * forget: every node named in `names` (icon names, a string set) and the
 * misses of those names it holds; with `all`, every node and miss.
 * O(nodes + misses). Send them without holding any tree lock. */
void tree_collect_invalidations(struct tree *t, GHashTable *names, bool all,
				struct timespec when, GArray *out);
void tree_inval_clear(GArray *invals);

/* The desktop's theme setting changed: MNT/<N>/ serves `theme` from now
 * on (`source` says what chose it, for user.iconfs.theme-source); `out`
 * gets what the kernel holds of the flat views. */
void tree_set_default_theme(struct tree *t, const char *theme,
			    const char *source, GArray *out);

/* The node table is a cache like any other, bounded by memory: past
 * `max_bytes`, the least recently used files' entries are to be
 * invalidated, so that the kernel forgets them (and tree_forget() frees
 * them) unless they are open. 9 MiB hold about 21,000 icon nodes (each
 * about 450 bytes with its strings and table entries: 9.46 MB counted for
 * 21,124 nodes of Papirus): more than the largest size directory of the
 * installed themes (about 18,000), and ten times a desktop's working set. */
#define TREE_NODES_BYTES   (9u * 1024 * 1024)
#define TREE_NODE_OVERHEAD 96 /* malloc headers and hash table entries */
void tree_collect_evictions(struct tree *t, size_t max_bytes, GArray *out);
/* Readable once the nodes take a thirty-second more (TREE_SLACK) than the last
 * tree_collect_evictions' `max_bytes` (TREE_NODES_BYTES before the first),
 * until it runs again: a busy program adds a thousand nodes a
 * second, which should not wait for the next period to be evicted (a
 * bound the heap overshoots by megabytes keeps them). -1 without one. */
int tree_pressure_fd(struct tree *t);
