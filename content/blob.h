/* The rendered-blob table, and the only code with SQL for it: exact-size
 * PNGs keyed by the source's real path and pixel size, valid while the
 * source's stamp (inode, size, mtime) is unchanged; in the shared layer,
 * also where only the inode changed and the source's bytes hash as they
 * did (the same files copied to another machine: schema 008). Every row carries
 * checksums over its key, stamp, length and data (schema 003): a row that
 * fails them is treated as missing, never served. A failure is stored only
 * as a verdict on the source, stamped with the iconfs version that gave it.
 *
 * Reads (blob_get) run on a reader, the prepared statements of one
 * thread's connection, and never write. Writes
 * (blob_put, blob_touch, blob_evict, blob_drop_source) are the blob
 * writer's (store.h), inside its transactions. */
#pragma once

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct blob_key {
	const char *source; /* real path */
	unsigned px;
	long long ino, size, mtime_ns;
	long long hash; /* of the source's bytes (blob_source_hash), or 0 */
};

/* The hash a row keeps of its source's bytes: never 0. */
long long blob_source_hash(const void *data, size_t len);

/* "PX:SOURCE": a render's name in the tables of renders under way and
 * queued (g_free). */
char *blob_key_text(const struct blob_key *k);

/* The prepared reads of connection `db` (borrowed: close it after the
 * reader is freed) and, when `shared` is not NULL, of the shared layer of
 * renders at that path (its own read-only connection, left out when it
 * cannot be used). One thread's, like the connection. */
struct blob_reader;
int blob_reader_new(sqlite3 *db, const char *shared, struct blob_reader **ret);
struct blob_reader *blob_reader_free(struct blob_reader *b);
static inline void blob_reader_freep(struct blob_reader **b)
{
	blob_reader_free(*b);
}

/* Whether the shared layer at `path` can be read below the user's table:
 * a regular file that only root (or the user) can write, an index of this
 * iconfs's schema with rendered icons; otherwise -errno and one log line
 * saying why it is ignored. The layer is opened immutable: never written,
 * never locked, replaced only by renaming a new one over it. */
int blob_layer_check(const char *path);

/* Building a layer (`iconfs render --shared-db`, on a copy): drop the
 * renders whose source changed or went, so that the layer carries no dead
 * bytes; then seal it: one file that readers open immutable (no WAL
 * beside it), readable by all. -errno. */
int blob_layer_drop_stale(const char *path);
int blob_layer_seal(const char *path);

/* Drop the renders of the user's own table (`db`) that the shared layer at
 * `layer` now holds for the same source stamp (it took in what users asked
 * for, asked.h): read from below from now on, the user's file keeps only
 * what is the user's alone. The number dropped, or -errno. */
int blob_drop_below(sqlite3 *db, const char *layer);

/* blob_get found the blob in the shared layer. */
#define BLOB_FROM_SHARED 1

/* 0 when a valid blob exists in the user's table, BLOB_FROM_SHARED when
 * only in the shared layer: its length and, when ret_data is not NULL, its
 * verified bytes (malloc()ed). Without ret_data only the row's head is read
 * (length, stamps, checksums), never the data. *ret_used (may be NULL)
 * gets the user's row's last use. -ENOENT when there is none, it is stale,
 * it fails its checks (logged) or is a failure judged by another version;
 * -EIO for a failure this version judged. `fd`, the source opened (or -1),
 * lets a layer's render whose source has another inode but the same
 * size, mtime and bytes be taken. */
int blob_get(struct blob_reader *b, const struct blob_key *k, int fd,
	     void **ret_data, size_t *ret_len, long long *ret_used);

/* Store a render (status 0, data) or a verdict (status > 0, an errno),
 * replacing any row of the key. *ret_delta: the change of the table's
 * byte total. */
int blob_put(sqlite3 *db, const struct blob_key *k, int status,
	     const void *data, size_t len, long long *ret_delta);

/* Record a use of (source, px) at `when` (unix seconds). */
int blob_touch(sqlite3 *db, const char *source, unsigned px, long long when);

/* Total bytes of stored renders (read from an index, not the data). */
long long blob_total(sqlite3 *db);

/* A render that only answered a stat (browsing: `ls -l`, `du`, a file
 * manager) is stored as used this long (seconds) before it was: eviction,
 * least recently used first, takes every one of those before any render a
 * program read, learned or read ahead. Its first read makes it an
 * ordinary render (blob_touch with the time). */
#define BLOB_STAT_TIER (1LL << 32)

/* Delete least recently used rows until `want` bytes are freed or
 * `max_rows` rows went. Returns the bytes freed or -errno. */
long long blob_evict(sqlite3 *db, long long want, unsigned max_rows);

/* Delete every row of `source` (any size). Returns the bytes freed or
 * -errno. */
long long blob_drop_source(sqlite3 *db, const char *source);

/* Call fn for every distinct source with the stamp of one of its rows. */
int blob_foreach_source(sqlite3 *db,
			void (*fn)(const struct blob_key *k, void *userdata),
			void *userdata);

struct blob_stats {
	long long rendered, bytes, failed;
};
int blob_stats(sqlite3 *db, struct blob_stats *ret);
