/* The rendered-blob table: exact-size PNGs keyed by the source's real path
 * and pixel size, valid while the source's stamp (inode, size, mtime) is
 * unchanged. A failed render is stored too (status = errno), so an
 * unchanged broken source is not retried. Writes are single transactions,
 * so a crash never leaves half a blob; a full disk makes blob_put() fail
 * with -ENOSPC and nothing else. Each call uses the caller's connection. */
#pragma once

#include <sqlite3.h>
#include <stddef.h>

struct blob_key {
	const char *source; /* real path */
	unsigned px;
	long long ino, size, mtime_ns;
};

/* 0 and the PNG's length when a valid blob exists (data too when ret_data
 * is not NULL, malloc()ed); -ENOENT when there is none or it is stale;
 * -EIO when a failure is recorded for this stamp. */
int blob_get(sqlite3 *db, const struct blob_key *k, void **ret_data,
	     size_t *ret_len);

/* Store a render (status 0, data) or a failure (status > 0 errno). */
int blob_put(sqlite3 *db, const struct blob_key *k, int status,
	     const void *data, size_t len);

/* Evict least recently used blobs until the table holds at most `budget`
 * bytes. Returns the number of bytes evicted. */
long long blob_trim(sqlite3 *db, long long budget);

/* Delete every blob whose source is `source` (any size). */
int blob_drop_source(sqlite3 *db, const char *source);
