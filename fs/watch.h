/* Live updates: a thread that watches the base directories and every
 * indexed directory with inotify (falling back to a stamp check every
 * second when watches run out), coalesces bursts, refreshes the index,
 * pushes invalidations for exactly the changed names into the kernel, and
 * drops renders whose source changed or vanished. Nothing here runs inside
 * a FUSE request handler. */
#pragma once

#include <fuse_lowlevel.h>

#include "scan.h"
#include "tree.h"

struct watch;

/* A watcher made before the mount's own refresh of the index: given
 * watch_scanner(), that refresh watches each directory just before it
 * looks at it, and the watcher's start-up needs no refresh of its own
 * (without it, the start-up watches and refreshes). Every later refresh
 * watches what it looks at the same way, new directories included. */
struct watch *watch_new(void);
const struct scan_watcher *watch_scanner(struct watch *w);

/* Start the thread. Borrowed: `tree`, `content` (renders of changed
 * sources are dropped from it), `synth` (what it built from the index goes
 * at a change) and `gen` (the index generation, which the watcher moves
 * on at a change). */
int watch_start(struct watch *w, struct fuse_session *se, struct tree *tree,
		struct content *content, struct synth *synth,
		struct generation *gen, const char *db_path,
		char *const *basedirs);
/* End the thread (if it runs); watch_free() also frees the rest. */
void watch_stop(struct watch *w);
void watch_free(struct watch *w);
static inline void watch_freep(struct watch **w)
{
	watch_free(*w);
}
/* Whether the start-up is done: every directory watched, the changes since
 * the mount's own refresh applied, the synthesized files stored. */
bool watch_ready(struct watch *w);

/* Send a tree's invalidations (struct tree_inval) to the kernel; never
 * with a tree lock held. */
void watch_invalidate(struct watch *w, GArray *invals);
/* How many were sent so far. */
unsigned long long watch_invalidations(struct watch *w);
/* How many refreshes of the index the watcher made so far. */
unsigned long long watch_refreshes(struct watch *w);
