/* The mounted tree's inodes: what each node is, its attributes, its
 * listing and its open files. Node lifetime follows the kernel's lookup
 * count (tree_lookup adds one, tree_forget takes them away), so memory
 * stays bounded by what the kernel holds. All functions are thread-safe;
 * those that touch the index take the calling thread's struct tree_ctx. */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <sqlite3.h>
#include <stdint.h>
#include <sys/stat.h>

#include "content.h"
#include "lookup.h"

#define TREE_ROOT_INO 1

/* How long the kernel may keep entries and attributes: live updates
 * invalidate exactly what changed, so there is no reason to expire. */
#define TREE_TIMEOUT 86400.0
/* Misses the tree cannot track (past the bound, or answered while the
 * index changed) are cached this long only. */
#define TREE_NEGATIVE_BRIEF 1.0
#define TREE_NEGATIVES_MAX  65536

struct tree;

/* Per-thread: the connection and lookup that thread's requests use. */
struct tree_ctx {
	sqlite3 *db;
	struct lookup *l;
	unsigned generation; /* of the index its lookup cache belongs to */
};

struct tree_counters {
	atomic_ullong lookups, negative, getattrs, opens, reads, readdirs;
	atomic_ullong invalidations; /* sent to the kernel */
};

int tree_new(const char *default_theme, struct content *content,
	     struct tree **ret);
struct tree *tree_free(struct tree *t);
struct tree_counters *tree_counters(struct tree *t);

/* Resolve `name` in directory `parent`: on success the child's ino and
 * attributes, with one more kernel reference. -ENOENT for names that do not
 * exist, with the timeout the negative entry is to be cached for;
 * -ENOTDIR, -ENAMETOOLONG, -EIO. */
int tree_lookup(struct tree *t, struct tree_ctx *x, uint64_t parent,
		const char *name, uint64_t *ret_ino, struct stat *ret_st,
		double *ret_negative_timeout);
void tree_forget(struct tree *t, uint64_t ino, uint64_t nlookup);
int tree_getattr(struct tree *t, uint64_t ino, struct stat *ret_st);

/* A directory listing: names with their d_type and inode number (the one
 * a lookup of the name gives), "." and ".." first. */
struct tree_listing {
	GPtrArray *names;
	GArray *types; /* unsigned char DT_* per name */
	GArray *inos;  /* uint64_t per name */
};
int tree_list(struct tree *t, struct tree_ctx *x, uint64_t ino,
	      struct tree_listing **ret);
void tree_listing_free(struct tree_listing *ls);

/* An open file: either an fd on the source or the bytes in memory. */
struct tree_file {
	int fd;
	void *data;
	size_t len;
};
int tree_open(struct tree *t, struct tree_ctx *x, uint64_t ino,
	      struct tree_file **ret);
/* Read up to `size` bytes at `off` into `buf`; returns the count or -errno. */
ssize_t tree_read(struct tree_file *f, void *buf, size_t size, off_t off);
void tree_file_free(struct tree_file *f);

/* Extended attributes: user.iconfs.source on files, user.iconfs.counters and
 * user.iconfs.theme (the theme of MNT/<N>/) on the root. Returns the value
 * (g_free) or -ENODATA. */
int tree_getxattr(struct tree *t, uint64_t ino, const char *name,
		  char **ret_value);
/* NUL-separated names, as listxattr(2) returns them. */
int tree_listxattr(struct tree *t, uint64_t ino, GString *out);

/* Build the default theme's and hicolor's listings and icon-theme.cache
 * ahead of the first toolkit that asks (the first costs a lookup per name).
 * Done once after mounting: after a change the first reader rebuilds them,
 * so that a rebuild never delays the next refresh. */
void tree_warm(struct tree *t, struct tree_ctx *x);

/* After the index changed: drop cached listings, and date directories. */
void tree_flush(struct tree *t);

/* One kernel-cache invalidation: an inode (ino != 0: attributes, page cache,
 * cached listing) or an entry (name in directory parent, negative or not). */
struct tree_inval {
	uint64_t ino;
	uint64_t parent;
	char *name;
};

/* What the kernel must forget after the index changed: every node named in
 * `names` (icon names, a string set) and the entries of those names in
 * every size view the kernel knows (negative ones too); with `all`, every
 * node. Appends struct tree_inval to `out` (free with tree_inval_clear) and
 * drops the listing caches. Send them without holding any tree lock. */
void tree_collect_invalidations(struct tree *t, GHashTable *names, bool all,
				GArray *out);
void tree_inval_clear(GArray *invals);

/* The node table is a cache like any other: past `max_nodes`, the least
 * recently used files' entries are to be invalidated, so that the kernel
 * forgets them (and tree_forget() frees them) unless they are open. */
#define TREE_NODES_MAX 8192
void tree_collect_evictions(struct tree *t, unsigned max_nodes, GArray *out);
void tree_set_refresh_time(struct tree *t, struct timespec when);
