/* The root's user.iconfs.counters: one table, FS_COUNTERS, from which the
 * attribute's text (fs.c) and the man page's list (docs/counters.py reads
 * this file at build time) are made. One row per counter, one line each,
 * in the order the text shows them:
 *   REQUEST(name, help)  a request counter, a field of struct fs_counters
 *                        that the handler answering it bumps (FS_COUNT);
 *   VALUE(name, value, help)  read from the part that keeps it when the
 *                        text is made: `value` is an expression over `s`,
 *                        a struct fs_snapshot (fs.c).
 * `help` is the man page's sentence (no double quotes). Header only. */
#pragma once

#include <stdatomic.h>

#define FS_COUNTERS(REQUEST, VALUE) \
	REQUEST(lookups, "LOOKUP requests: a program resolved a name") \
	REQUEST(negative, "of which answered with a miss the kernel caches") \
	REQUEST(getattrs, "GETATTR requests") \
	REQUEST(opens, "OPEN requests (none where the kernel reads without opening)") \
	REQUEST(reads, "READ requests") \
	REQUEST(readdirs, "listings built (the kernel caches each)") \
	REQUEST(dirplus, "entries a READDIRPLUS gave attributes with") \
	REQUEST(getxattrs, "GETXATTR requests, this attribute's aside") \
	REQUEST(contexts, "request contexts made: a thread's connection to the index, lookup and reader") \
	VALUE(renders, s.c->renders, "renders requested from the workers") \
	VALUE(render_failures, s.c->render_failures, "renders that failed (a malformed source)") \
	VALUE(blob_hits, s.c->blob_hits, "files answered from stored renders") \
	VALUE(shared_hits, s.c->shared_hits, "of which from the shared layer") \
	VALUE(native, s.c->native, "files served as their source's own bytes") \
	VALUE(cache_errors, s.c->cache_errors, "renders that could not be stored (a full disk)") \
	VALUE(worker_restarts, content_worker_restarts(s.fs->content), "render workers started again after a crash or a hang") \
	VALUE(nodes, s.nodes, "nodes the kernel holds") \
	VALUE(negatives, s.negatives, "misses the kernel holds") \
	VALUE(invalidations, watch_invalidations(s.fs->watch), "entries and inodes the kernel was told to forget") \
	VALUE(node_bytes, s.node_bytes, "memory the nodes take, in bytes") \
	VALUE(read_ahead, s.read_ahead, "files of the working set read ahead at this mount") \
	VALUE(read_ahead_done, s.read_ahead_done, "1 once that read ahead is over") \
	VALUE(synth_builds, synth_built(s.fs->synth), "synthesized files and name lists a request built, not found stored in the index or its layer") \
	VALUE(resolved_ahead, resolved_taken(s.fs->resolved), "lookups that took an icon the resolved cache kept for them") \
	VALUE(watch_ready, watch_ready(s.fs->watch), "1 once live updates watch every directory") \
	VALUE(refreshes, watch_refreshes(s.fs->watch), "stamp checks of the index the watcher made (none at the start when the mount's own watched each directory)") \
	VALUE(budget_mib, s.fs->budget >> 20, "what the stored renders may fill, in MiB") \
	VALUE(heap_in_use, s.heap.uordblks, "bytes the daemon's heap has handed out (mallinfo2)") \
	VALUE(heap_free, s.heap.fordblks, "bytes free in the heap's chunks, whether or not their pages went back to the kernel")

/* The request counters (REQUEST rows). */
struct fs_counters {
#define FS_COUNTER_FIELD(name, help) atomic_ullong name;
#define FS_COUNTER_NONE(name, value, help)
	FS_COUNTERS(FS_COUNTER_FIELD, FS_COUNTER_NONE)
#undef FS_COUNTER_FIELD
#undef FS_COUNTER_NONE
};

#define FS_COUNT(fs, name) atomic_fetch_add(&(fs)->counters.name, 1)
