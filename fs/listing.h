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

/* Entries: `names` ("." and ".." first, then a directory's fixed and
 * theme entries), then in an icon view its `icons`, each named with
 * `suffix` (not copied: `find` and `ls` walk millions of them). */
struct listing {
	GPtrArray *names; /* owned strings */
	GArray *types;	  /* unsigned char DT_* per name */
	GPtrArray *icons; /* icon names borrowed from `icon_src`, or NULL */
	GPtrArray *icon_src; /* the synthesized name list (a reference) */
	GPtrArray *symbolic_src; /* synth_symbolic_pngs' (a reference), or NULL */
	const char *suffix;  /* ".png" or ".svg" */
	GArray *inos;	     /* uint64_t per entry: names, then icons */
};

/* How many entries; the name of entry `i` (in `buf`, room for NAME_MAX + 1
 * bytes, where it must be put together), its d_type and inode number. */
unsigned listing_count(const struct listing *ls);
const char *listing_entry(const struct listing *ls, unsigned i, char *buf,
			  unsigned char *ret_type, uint64_t *ret_ino);

/* A size view's icons are also queued on `pf` (may be NULL) to be rendered
 * ahead of the stats that follow a listing. */
int listing_build(struct tree *t, struct request *x, struct prefetch *pf,
		  uint64_t ino, struct listing **ret);
void listing_free(struct listing *ls);
