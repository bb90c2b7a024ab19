/* The index database file: opening, checking, migrating, and the glue that
 * turns SQLite result codes into -errno. A file that is corrupt, not SQLite
 * at all, or another program's database is moved aside (to PATH.broken) and
 * a fresh one created, with a log line; one written by a newer iconfs is
 * left alone and refused. A process opens, checks and migrates the index
 * once (db_open) and takes further connections with db_connect, which never
 * checks, migrates or moves anything. One connection per thread: callers
 * own the sqlite3 handle they get and close it with sqlite3_closep.
 * A DB_CHECK connection that passed its check stamps the file when it is
 * closed (inode, size and mtime in the xattr user.iconfs.checked), and the
 * next DB_CHECK open skips the check while the file still matches its
 * stamp and has no WAL left over: only a file changed outside a checked
 * connection's close (another writer, a crash, a stray write) is checked. */
#pragma once

#include <sqlite3.h>
#include <stdbool.h>

#include "macro.h"

enum db_open_flags {
	DB_READONLY = 1 << 0,	/* no create, no migration, query_only */
	DB_CHECK = 1 << 1,	/* quick_check of the index tables first,
				 * unless the file is as a DB_CHECK
				 * connection closed it (see above) */
	DB_QUERY_ONLY = 1 << 2, /* db_connect: this connection never writes */
};

/* -EPROTONOSUPPORT for an index of a newer iconfs. */
int db_open(const char *path, unsigned flags, sqlite3 **ret);

/* A read-only, immutable connection to an index another program wrote
 * (such as the shared layer of renders, content/blob.h): -EBADMSG when it
 * is not an iconfs index,
 * -EPROTO when its schema is not this iconfs's; never written, never
 * locked, never migrated. */
int db_open_immutable(const char *path, sqlite3 **ret);

/* Whether the file at `path` may be read as the machine's layer: a regular
 * file that only root or this user can write. 0, or -errno with *ret_why
 * saying why not ("cannot be read", ...). */
int db_file_trusted(const char *path, const char **ret_why);

/* The index at `path` attached to `db` as schema `name`, read-only and
 * immutable, as db_open_immutable() opens one: -EBADMSG when it is not an
 * iconfs index, -EPROTO when its schema is not this iconfs's. */
int db_attach_immutable(sqlite3 *db, const char *path, const char *name);

/* Remove the WAL and shared-memory files of the index at `path`, and with
 * `main_too` the file itself. */
void db_unlink(const char *path, bool main_too);

/* Another connection to an index db_open() already prepared. Waits for
 * locks at most busy_ms. */
int db_connect(const char *path, unsigned flags, int busy_ms, sqlite3 **ret);

/* Map an SQLite result code to a negative errno (SQLITE_OK → 0). */
int db_errno(int rc);

/* Log the connection's last error with a context and return -errno: from
 * an SQLite result code (db_log_error) or from a -errno that a db_*()
 * helper returned (db_log_errno). */
int db_log_error(sqlite3 *db, int rc, const char *what);
int db_log_errno(sqlite3 *db, int r, const char *what);

int db_exec(sqlite3 *db, const char *sql);

/* Write a WAL index's log back into the file and truncate the log, when
 * it is over `max_bytes` and no reader is using it (never waits for a
 * lock); and give back the connection's unused page cache. A connection
 * that writes in bursts calls it after one, so that the log stays bounded
 * while others keep the index open (SQLite only truncates it when the last
 * connection closes) and its cache does not keep the burst's pages. False when the log is
 * still over `max_bytes` (a reader was using it: try again later). */
bool db_wal_trim(sqlite3 *db, long long max_bytes);
/* Give back the connection's page cache (the pages no statement holds):
 * for a connection that goes idle after a burst of reads or writes. */
void db_release_cache(sqlite3 *db);

/* Give the free pages of an index back to the file system (for an index
 * made by this iconfs, which keeps a list of them; not in a transaction). */
void db_shrink(sqlite3 *db);

int db_prepare(sqlite3 *db, const char *sql, sqlite3_stmt **ret);

/* db_prepare() and bind parameters ?1, ?2, ... from the arguments, one
 * character of `types` each: 'i' an int, 'I' a long long, 't' a string
 * (SQLITE_STATIC: it must outlive the statement's steps). */
int db_query(sqlite3 *db, sqlite3_stmt **ret, const char *sql,
	     const char *types, ...);
/* The same, and step to the first row: 0 on a row, -ENOENT for none. */
int db_query_row(sqlite3 *db, sqlite3_stmt **ret, const char *sql,
		 const char *types, ...);

/* A module's long-lived statements, prepared and finalized together. */
struct db_statement {
	sqlite3_stmt **stmt;
	const char *sql;
};
int db_prepare_all(sqlite3 *db, const struct db_statement *list, size_t n);
void db_finalize_all(const struct db_statement *list, size_t n);

/* Meta key/value helpers (table meta). */
int db_meta_set_int(sqlite3 *db, const char *key, long long value);
long long db_meta_get_int(sqlite3 *db, const char *key, long long def);
/* A text value (NULL: no such key; g_free() it); setting NULL removes it. */
char *db_meta_get_text(sqlite3 *db, const char *key);
int db_meta_set_text(sqlite3 *db, const char *key, const char *value);

static inline void sqlite3_closep(sqlite3 **db)
{
	if (*db)
		(void)sqlite3_close_v2(*db);
}

static inline void sqlite3_finalizep(sqlite3_stmt **stmt)
{
	if (*stmt)
		(void)sqlite3_finalize(*stmt);
}

/* For a long-lived statement: reset at scope exit, which ends its read. */
static inline void sqlite3_resetp(sqlite3_stmt **stmt)
{
	if (*stmt)
		(void)sqlite3_reset(*stmt);
}

/* Text column as a C string ("" for NULL). */
static inline const char *db_column_str(sqlite3_stmt *stmt, int col)
{
	const unsigned char *s = sqlite3_column_text(stmt, col);
	return s ? (const char *)s : "";
}
