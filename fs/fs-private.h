/* The mount's state, shared by its two halves: fs.c (the FUSE handlers and
 * their table) and mount.c (start-up, the loop, shutdown). struct fs owns
 * every part a request reaches (the tree, content, synthesized files, the
 * prefetch, the working set, the watcher) and the request counters.
 * Private to those two files. */
#pragma once

#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "tree.h"

/* The mount's request counters, bumped where each request is answered
 * (the root's user.iconfs.counters shows them). */
struct fs_counters {
	atomic_ullong lookups, negative, getattrs, opens, reads, readdirs;
	atomic_ullong getxattrs;
	atomic_ullong dirplus; /* entries READDIRPLUS gave attributes for */
};

struct fs {
	const char *db_path;
	long long budget; /* bytes the stored renders may fill */
	struct tree *tree;
	struct content *content;
	struct synth *synth;
	struct generation generation; /* of the index; the watcher bumps it */
	struct fs_counters counters;
	pthread_key_t ctx_key;
	bool no_open; /* the kernel reads files without opening them */
	struct fuse_session *se;
	struct prefetch *prefetch;
	struct ahead *ahead; /* what the prefetch and the read ahead resolved */
	struct warm *warm;
	struct watch *watch;
};

/* The low-level handlers (fs.c). */
extern const struct fuse_lowlevel_ops fs_ops;

/* This thread's connection and lookup, opened on first use (freed by
 * fs_ctx_free, the thread key's destructor), set up for one request: one
 * that may not render (`stored_only`: the read ahead, a READDIRPLUS past
 * its budget) gets -EAGAIN where a render would be needed. NULL when the
 * index cannot be opened. The only place a request's mode is set. */
struct tree_ctx *fs_ctx(struct fs *fs, bool stored_only);
void fs_ctx_free(void *p);
