/* The blob writer: one thread with its own connection that stores renders,
 * verdicts, uses and drops in batched transactions, and holds the table to
 * its byte budget from a running total. FUSE requests never write SQLite
 * nor wait for its write lock: they queue here and go on. Until a render is
 * committed it is served from memory (store_get_pending), so a writer
 * stalled by another process's lock costs readers nothing. A batch that
 * meets a busy index is retried later; one that meets a full disk is given
 * up (counted in store_errors) and its renders are simply rendered again
 * when asked: a full disk stops caching, not serving.
 *
 * All functions are thread-safe. Queued bytes are bounded: past the bound a
 * render is served but not cached. */
#pragma once

#include <stddef.h>

#include "blob.h"

struct store;

/* With `shared` (the shared layer, may be NULL), renders of the table that
 * the layer holds are dropped first (blob_drop_below). */
int store_new(const char *db_path, const char *shared, long long budget,
	      struct store **ret);
/* Writes what is queued (waiting at most a few seconds), then stops. */
struct store *store_free(struct store *s);

/* Queue a render (status 0, a copy of `png` is taken) or a verdict
 * (status > 0); with `stat_only`, a render nobody read yet, in the lower
 * tier of the budget (BLOB_STAT_TIER). Never blocks on SQLite. */
void store_put(struct store *s, const struct blob_key *k, int status,
	       const void *png, size_t len, bool stat_only);

/* A queued entry for exactly this key and stamp: 0 with the length and,
 * when ret_data is not NULL, a copy (malloc()ed) of its bytes; -EIO for a
 * queued verdict; -ENOENT when there is none. The first read of a render
 * queued `stat_only` lifts it out of the lower tier (once: later reads
 * queue nothing). */
int store_get_pending(struct store *s, const struct blob_key *k,
		      void **ret_data, size_t *ret_len);

/* Note a use of (source, px); written coarsely. */
void store_touch(struct store *s, const char *source, unsigned px);

/* Drop every stored render of `source`. */
void store_drop_source(struct store *s, const char *source);

/* Wait until everything queued so far is written or given up; -ETIMEDOUT
 * after `timeout_ms`. */
int store_sync(struct store *s, unsigned timeout_ms);

/* Bytes of renders in the table, as the writer last counted them. */
long long store_total(struct store *s);

/* Writes given up so far (a full disk, an I/O error). */
unsigned long long store_errors(struct store *s);
