/* Directory listings of the mounted tree: the entries of a directory with
 * their d_type and inode number (the one a lookup of the entry gives),
 * built from the synthesized name lists (synth.h) and numbered by the tree.
 * A listing built while the index changed under it is built again: the
 * kernel caches what it gets, and the invalidation may already be past. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "tree.h"

struct listing {
	GPtrArray *names; /* "." and ".." first */
	GArray *types;	  /* unsigned char DT_* per name */
	GArray *inos;	  /* uint64_t per name */
};

int listing_build(struct tree *t, struct tree_ctx *x, uint64_t ino,
		  struct listing **ret);
void listing_free(struct listing *ls);
