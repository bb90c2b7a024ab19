/* Directory listings of the mounted tree: the entries of a directory with
 * their d_type and inode number (the one a lookup of the entry gives),
 * built from the synthesized name lists (synth.h) and numbered by the tree.
 * A listing built while the index changed under it is built again: the
 * kernel caches what it gets, and the invalidation may already be past. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "prefetch.h"
#include "tree.h"

struct listing {
	GPtrArray *names; /* "." and ".." first */
	GArray *types;	  /* unsigned char DT_* per name */
	GArray *inos;	  /* uint64_t per name */
};

/* A size view's icons are also queued on `pf` (may be NULL) to be rendered
 * ahead of the stats that follow a listing. */
int listing_build(struct tree *t, struct tree_ctx *x, struct prefetch *pf,
		  uint64_t ino, struct listing **ret);
void listing_free(struct listing *ls);
