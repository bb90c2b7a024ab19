/* A request's context, owned by fs: fs.c gives every request (and the
 * working set's read ahead, mount.c) the calling thread's struct request,
 * taken on the thread's first request (fs_request, fs-private.h): from the
 * contexts of threads that ended, else built; the tree,
 * listings and open files take it. What a request may do is its
 * enum request_mode, an argument of every call that may render, never part
 * of the context. Header only. */
#pragma once

#include <sqlite3.h>
#include <stdint.h>

#include "content.h"
#include "generation.h"
#include "lookup.h"
#include "resolved.h"
#include "synth.h"

enum request_mode {
	REQUEST_RENDER,	     /* render what is not stored yet */
	/* only what is stored: -EAGAIN where a render would be needed (the
	 * working set's read ahead, a READDIRPLUS past its budget) */
	REQUEST_STORED_ONLY,
	/* a LOOKUP: what is not stored yet is rendered when its size is
	 * asked for (tree_node_settle: GETATTR, OPEN, the first read), not
	 * now. Qt and KDE ask access(2) of a name in every directory of a
	 * theme that holds it and load one of them; a LOOKUP for each of
	 * those renders nothing. */
	REQUEST_DEFER,
};

/* Per thread, reused by each of its requests. */
struct request {
	/* the thread's own: its connection to the index, its lookup (with
	 * a cache of the index generation `generation_seen`) and its reader
	 * of the blob table */
	sqlite3 *db;
	struct lookup *l;
	struct blob_reader *blobs;
	uint64_t generation_seen;
	/* the mount's, borrowed from struct fs */
	struct fs *fs;		     /* whose pool it goes back to */
	struct content *content;     /* what a file holds */
	struct synth *synth;	     /* synthesized files */
	struct generation *generation; /* the index generation now */
	struct resolved *resolved;   /* the resolved cache (may be NULL) */
};

static inline unsigned request_content_flags(enum request_mode mode)
{
	return mode == REQUEST_STORED_ONLY ? CONTENT_STORED_ONLY
	       : mode == REQUEST_DEFER	   ? CONTENT_UNSIZED
					   : 0;
}
