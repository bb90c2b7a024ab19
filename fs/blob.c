/* The rendered-blob table; see blob.h. */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "blob.h"
#include "db.h"
#include "log.h"

/* A blob's last use is written back at most this often (seconds), so that
 * reading stays a read. */
#define BLOB_USED_GRANULARITY 3600

static void bind_key(sqlite3_stmt *s, const struct blob_key *k)
{
	sqlite3_bind_text(s, 1, k->source, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 2, (int)k->px);
}

int blob_get(sqlite3 *db, const struct blob_key *k, void **ret_data,
	     size_t *ret_len)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *s = NULL;
	long long used;
	int rc, r;

	r = db_prepare(db,
		       ret_data ? "SELECT src_ino, src_size, src_mtime_ns, "
				  "status, bytes, used, data FROM blob "
				  "WHERE source = ?1 AND px = ?2"
				: "SELECT src_ino, src_size, src_mtime_ns, "
				  "status, bytes, used FROM blob "
				  "WHERE source = ?1 AND px = ?2",
		       &s);
	if (r < 0)
		return r;
	bind_key(s, k);
	rc = sqlite3_step(s);
	if (rc == SQLITE_DONE)
		return -ENOENT;
	if (rc != SQLITE_ROW)
		return db_log_error(db, rc, "cannot read rendered icon");
	if (sqlite3_column_int64(s, 0) != k->ino ||
	    sqlite3_column_int64(s, 1) != k->size ||
	    sqlite3_column_int64(s, 2) != k->mtime_ns)
		return -ENOENT;
	if (sqlite3_column_int(s, 3) != 0)
		return -EIO;
	if (ret_data) {
		const void *d = sqlite3_column_blob(s, 6);
		size_t n = sqlite3_column_bytes(s, 6);
		void *copy = malloc(n ? n : 1);

		if (!copy)
			return -ENOMEM;
		memcpy(copy, d, n);
		*ret_data = copy;
	}
	*ret_len = sqlite3_column_int64(s, 4);
	used = sqlite3_column_int64(s, 5);
	sqlite3_finalize(TAKE_PTR(s));

	if (time(NULL) - used > BLOB_USED_GRANULARITY) {
		r = db_prepare(db,
			       "UPDATE blob SET used = ?3 "
			       "WHERE source = ?1 AND px = ?2",
			       &s);
		if (r >= 0) {
			bind_key(s, k);
			sqlite3_bind_int64(s, 3, (long long)time(NULL));
			(void)sqlite3_step(s);
		}
	}
	return 0;
}

int blob_put(sqlite3 *db, const struct blob_key *k, int status,
	     const void *data, size_t len)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *s = NULL;
	int rc, r;

	r = db_prepare(db,
		       "INSERT OR REPLACE INTO blob(source, px, src_ino, "
		       "src_size, src_mtime_ns, status, data, bytes, used) "
		       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
		       &s);
	if (r < 0)
		return r;
	bind_key(s, k);
	sqlite3_bind_int64(s, 3, k->ino);
	sqlite3_bind_int64(s, 4, k->size);
	sqlite3_bind_int64(s, 5, k->mtime_ns);
	sqlite3_bind_int(s, 6, status);
	if (status == 0)
		sqlite3_bind_blob(s, 7, data, (int)len, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 7);
	sqlite3_bind_int64(s, 8, status == 0 ? (long long)len : 0);
	sqlite3_bind_int64(s, 9, (long long)time(NULL));
	rc = sqlite3_step(s);
	if (rc != SQLITE_DONE)
		return db_errno(rc);
	return 0;
}

long long blob_trim(sqlite3 *db, long long budget)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *sum = NULL;
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *del = NULL;
	long long total, evicted = 0;

	if (db_prepare(db, "SELECT coalesce(sum(bytes), 0) FROM blob", &sum) <
		    0 ||
	    sqlite3_step(sum) != SQLITE_ROW)
		return 0;
	total = sqlite3_column_int64(sum, 0);
	if (total <= budget)
		return 0;
	/* Trim to 90% so that eviction does not run on every insert: the
	 * least recently used rows whose running total stays under what
	 * must go, and the one that crosses it. */
	if (db_prepare(db,
		       "DELETE FROM blob WHERE (source, px) IN ("
		       "SELECT source, px FROM (SELECT source, px, bytes, "
		       "sum(bytes) OVER (ORDER BY used, source, px) AS acc "
		       "FROM blob) WHERE acc - bytes < ?1) RETURNING bytes",
		       &del) < 0)
		return 0;
	sqlite3_bind_int64(del, 1, total - budget / 10 * 9);
	while (sqlite3_step(del) == SQLITE_ROW)
		evicted += sqlite3_column_int64(del, 0);
	return evicted;
}

int blob_drop_source(sqlite3 *db, const char *source)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *s = NULL;
	int r = db_prepare(db, "DELETE FROM blob WHERE source = ?1", &s);

	if (r < 0)
		return r;
	sqlite3_bind_text(s, 1, source, -1, SQLITE_STATIC);
	return sqlite3_step(s) == SQLITE_DONE ? 0 : -EIO;
}
