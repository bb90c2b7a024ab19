/* Opening and migrating the index; see db.h. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>

#include "db.h"
#include "log.h"
#include "schema.h"
#include "time-util.h"

/* 'icfs' in PRAGMA application_id marks our files; anything else with
 * tables in it is foreign. */
#define ICONFS_APPLICATION_ID 0x69636673

int db_errno(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_OK:
	case SQLITE_ROW:
	case SQLITE_DONE:
		return 0;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_READONLY:
		return -EROFS;
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_CANTOPEN:
		return -ENOENT;
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return -EACCES;
	case SQLITE_TOOBIG:
		return -E2BIG;
	case SQLITE_CONSTRAINT:
		return -EEXIST;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		return -EBADMSG;
	case SQLITE_INTERRUPT:
		return -EINTR;
	default:
		return -EIO;
	}
}

int db_log_error(sqlite3 *db, int rc, const char *what)
{
	return log_error_errno(db_errno(rc), "%s: %s", what,
			       db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
}

int db_log_errno(sqlite3 *db, int r, const char *what)
{
	return log_error_errno(r, "%s: %m (%s)", what,
			       db ? sqlite3_errmsg(db) : "no connection");
}

int db_exec(sqlite3 *db, const char *sql)
{
	int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return db_errno(rc);
	return 0;
}

bool db_wal_trim(sqlite3 *db, long long max_bytes)
{
	const char *path = sqlite3_db_filename(db, "main");
	sqlite3_stmt *q = NULL;
	struct stat st;
	int busy_ms = 0, rc;

	/* the burst's pages are of no more use in this connection's cache */
	db_release_cache(db);
	if (!path || !*path || stat(sqlite3_filename_wal(path), &st) < 0 ||
	    st.st_size <= max_bytes)
		return true;
	if (db_prepare(db, "PRAGMA busy_timeout", &q) >= 0 &&
	    sqlite3_step(q) == SQLITE_ROW)
		busy_ms = sqlite3_column_int(q, 0);
	sqlite3_finalize(q);
	(void)sqlite3_busy_timeout(db, 0);
	rc = sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_TRUNCATE,
				       NULL, NULL);
	(void)sqlite3_busy_timeout(db, busy_ms);
	if (rc != SQLITE_OK && rc != SQLITE_BUSY && rc != SQLITE_LOCKED)
		(void)db_log_error(db, rc, "cannot trim the index's log");
	return rc == SQLITE_OK;
}

int db_prepare(sqlite3 *db, const char *sql, sqlite3_stmt **ret)
{
	int rc = sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, ret,
				    NULL);
	if (rc != SQLITE_OK)
		return db_log_error(db, rc, "cannot prepare statement");
	return 0;
}

static int db_bind_va(sqlite3_stmt *s, const char *types, va_list ap)
{
	for (int i = 0; types[i]; i++) {
		if (types[i] == 'i')
			sqlite3_bind_int(s, i + 1, va_arg(ap, int));
		else if (types[i] == 'I')
			sqlite3_bind_int64(s, i + 1, va_arg(ap, long long));
		else
			sqlite3_bind_text(s, i + 1, va_arg(ap, const char *),
					  -1, SQLITE_STATIC);
	}
	return 0;
}

int db_query_row(sqlite3 *db, sqlite3_stmt **ret, const char *sql,
		 const char *types, ...)
{
	va_list ap;
	int rc, r = db_prepare(db, sql, ret);

	if (r < 0)
		return r;
	va_start(ap, types);
	(void)db_bind_va(*ret, types, ap);
	va_end(ap);
	rc = sqlite3_step(*ret);
	return rc == SQLITE_ROW	   ? 0
	       : rc == SQLITE_DONE ? -ENOENT
				   : db_errno(rc);
}

int db_query(sqlite3 *db, sqlite3_stmt **ret, const char *sql,
	     const char *types, ...)
{
	va_list ap;
	int r = db_prepare(db, sql, ret);

	if (r < 0)
		return r;
	va_start(ap, types);
	(void)db_bind_va(*ret, types, ap);
	va_end(ap);
	return 0;
}

int db_prepare_all(sqlite3 *db, const struct db_statement *list, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int r = db_prepare(db, list[i].sql, list[i].stmt);
		if (r < 0)
			return r;
	}
	return 0;
}

void db_finalize_all(const struct db_statement *list, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		sqlite3_finalize(*list[i].stmt);
		*list[i].stmt = NULL;
	}
}

static long long db_pragma_int(sqlite3 *db, const char *sql, int *ret_rc)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *stmt = NULL;
	long long v = 0;
	int rc;

	rc = sqlite3_prepare_v2(db, sql, -1, &stmt, NULL);
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(stmt);
		if (rc == SQLITE_ROW) {
			v = sqlite3_column_int64(stmt, 0);
			rc = SQLITE_OK;
		} else if (rc == SQLITE_DONE) {
			rc = SQLITE_OK;
		}
	}
	*ret_rc = rc;
	return v;
}

/* PRAGMA quick_check of every table but the rendered blobs (which verify
 * themselves row by row when read): a check at login must not read up to
 * the blob budget. */
static int db_check_tables(sqlite3 *db)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *tables = NULL;
	int rc;

	rc = sqlite3_prepare_v2(
		db,
		"SELECT name FROM sqlite_schema WHERE type = "
		"'table' AND name NOT IN ('blob', 'shared_blob')",
		-1, &tables, NULL);
	if (rc != SQLITE_OK)
		return db_errno(rc);
	while ((rc = sqlite3_step(tables)) == SQLITE_ROW) {
		_cleanup_(sqlite3_finalizep) sqlite3_stmt *check = NULL;
		g_autofree char *sql = g_strdup_printf(
			"PRAGMA quick_check(\"%s\")", db_column_str(tables, 0));

		rc = sqlite3_prepare_v2(db, sql, -1, &check, NULL);
		if (rc != SQLITE_OK)
			return db_errno(rc);
		rc = sqlite3_step(check);
		if (rc != SQLITE_ROW)
			return db_errno(rc);
		if (!streq(db_column_str(check, 0), "ok"))
			return -EBADMSG;
	}
	return rc == SQLITE_DONE ? 0 : db_errno(rc);
}

/* The verdict of a passed quick_check, kept on the file it is about: the
 * inode, size and mtime of the main file as a connection opened with
 * DB_CHECK left it at its close, in an extended attribute (which changes
 * the ctime, not the mtime). What SQLite writes through its own
 * transactions after the check is as good as what it checked; anything
 * else that writes the file changes its mtime, or its inode when it
 * replaces the file. Only paths, never an fd, are used: closing an fd of
 * the file would drop the POSIX locks SQLite holds on it in this process.
 * Any error (a filesystem without user xattrs, a file of another user) means
 * no stamp, hence a check at every open, as without this. */
#define DB_CHECKED_XATTR "user.iconfs.checked"

static void db_checked_format(const struct stat *st, char *buf, size_t n)
{
	snprintf(buf, n, "%llu %lld %lld.%09ld", (unsigned long long)st->st_ino,
		 (long long)st->st_size, (long long)st->st_mtim.tv_sec,
		 (long)st->st_mtim.tv_nsec);
}

/* Is the file `db` opened as a checked connection left it? Not when its
 * WAL holds frames: writes of a connection that was not closed (a crash,
 * or another process that has it open), which no stamp covers. */
static bool db_checked_valid(sqlite3 *db)
{
	const char *path = sqlite3_db_filename(db, "main");
	char want[96], have[96];
	struct stat st, wst;
	ssize_t n;

	if (!path || !*path || stat(path, &st) < 0)
		return false;
	if (stat(sqlite3_filename_wal(path), &wst) == 0 && wst.st_size > 0)
		return false;
	n = getxattr(path, DB_CHECKED_XATTR, have, sizeof(have) - 1);
	if (n < 0)
		return false;
	have[n] = '\0';
	db_checked_format(&st, want, sizeof(want));
	return streq(have, want);
}

/* Stamp the file as it is now. A write in the same clock tick as the
 * file's last one may leave its mtime as it is, so the stamp waits (a
 * tick: 1-10 ms) until the clock that timestamps writes has passed the
 * mtime; a file whose mtime stays ahead (a network filesystem's clock) or
 * that changes meanwhile gets none. */
static void db_checked_write(const char *path)
{
	char stamp[96];
	struct stat st, again;
	struct timespec now;

	if (stat(path, &st) < 0)
		return;
	for (int waited = 0;; waited++) {
		clock_gettime(CLOCK_REALTIME_COARSE, &now);
		if (timespec_ns(now) > timespec_ns(st.st_mtim))
			break;
		if (waited == 20)
			return;
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	}
	if (stat(path, &again) < 0 || again.st_ino != st.st_ino ||
	    again.st_size != st.st_size ||
	    timespec_ns(again.st_mtim) != timespec_ns(st.st_mtim))
		return;
	db_checked_format(&st, stamp, sizeof(stamp));
	if (setxattr(path, DB_CHECKED_XATTR, stamp, strlen(stamp), 0) < 0)
		log_debug_errno(-errno, "no check stamp on index '%s': %m",
				path);
}

struct db_checked {
	bool armed;
	char path[];
};

/* The destructor of the function below: SQLite calls it when the
 * connection is closed (whichever way the caller closes it), after the
 * last connection's checkpoint has written the WAL back and removed it. */
static void db_checked_close(void *p)
{
	struct db_checked *c = p;

	if (c->armed)
		db_checked_write(c->path);
	free(c);
}

static void db_checked_noop(sqlite3_context *ctx, int argc,
			    sqlite3_value **argv)
{
	(void)argc;
	(void)argv;
	sqlite3_result_null(ctx);
}

/* Have the connection stamp its file when it closes. SQLite has no close
 * hook before 3.44 (sqlite3_set_clientdata); a function's destructor
 * serves, and runs (unarmed) at once when the function cannot be made. */
static void db_checked_arm(sqlite3 *db)
{
	const char *path = sqlite3_db_filename(db, "main");
	struct db_checked *c;
	size_t len;

	if (!path || !*path)
		return;
	len = strlen(path);
	c = malloc(sizeof(*c) + len + 1);
	if (!c)
		return;
	c->armed = false;
	memcpy(c->path, path, len + 1);
	if (sqlite3_create_function_v2(db, "iconfs_checked_close", 0,
				       SQLITE_UTF8, c, db_checked_noop, NULL,
				       NULL, db_checked_close) == SQLITE_OK)
		c->armed = true;
}

/* Checks that an open file is ours (or empty: *ret_empty) and intact.
 * Returns 0; -EBADMSG when it is corrupt or foreign and should be moved
 * aside; -EPROTONOSUPPORT when a newer iconfs wrote it; another -errno (a
 * full disk, an I/O error) when it must be left alone. */
static int db_verify(sqlite3 *db, unsigned flags, bool *ret_empty)
{
	long long app, version, tables;
	int rc;

	tables = db_pragma_int(db, "SELECT count(*) FROM sqlite_schema", &rc);
	if (rc != SQLITE_OK)
		return db_errno(rc);
	*ret_empty = tables == 0;
	app = db_pragma_int(db, "PRAGMA application_id", &rc);
	if (rc != SQLITE_OK)
		return db_errno(rc);
	version = db_pragma_int(db, "PRAGMA user_version", &rc);
	if (rc != SQLITE_OK)
		return db_errno(rc);
	if (tables > 0 && app != ICONFS_APPLICATION_ID)
		return -EBADMSG;
	if (version > (long long)schema_migrations_count)
		return -EPROTONOSUPPORT;
	if (flags & DB_CHECK && tables > 0 && !db_checked_valid(db))
		return db_check_tables(db);
	return 0;
}

/* Apply the migrations this file lacks, all in one transaction (a new
 * index is created in one commit). The version is read inside BEGIN
 * IMMEDIATE: of two processes opening a fresh index at once, the second
 * finds the first one's work done. */
static int db_migrate(sqlite3 *db)
{
	long long version;
	int rc, r;

	r = db_exec(db, "BEGIN IMMEDIATE");
	if (r < 0)
		return db_log_errno(db, r, "cannot begin migration");
	version = db_pragma_int(db, "PRAGMA user_version", &rc);
	if (rc != SQLITE_OK || version >= schema_migrations_count) {
		(void)db_exec(db, "ROLLBACK");
		if (rc != SQLITE_OK)
			return db_log_error(db, rc,
					    "cannot read schema version");
		return version > schema_migrations_count ? -EPROTONOSUPPORT : 0;
	}
	for (; rc == SQLITE_OK && version < schema_migrations_count; version++)
		rc = sqlite3_exec(db, schema_migrations[version], NULL, NULL,
				  NULL);
	if (rc == SQLITE_OK) {
		char sql[128];

		snprintf(sql, sizeof(sql),
			 "PRAGMA user_version = %lld;"
			 "PRAGMA application_id = %d",
			 version, ICONFS_APPLICATION_ID);
		rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	}
	if (rc != SQLITE_OK) {
		r = db_log_error(db, rc, "cannot migrate index");
		(void)db_exec(db, "ROLLBACK");
		return r;
	}
	r = db_exec(db, "COMMIT");
	return r < 0 ? db_log_errno(db, r, "cannot commit migration") : 0;
}

/* An index is its file and SQLite's two beside it (WAL mode). */
static const char *const db_file_suffixes[] = { "", "-wal", "-shm" };

static void db_move_aside(const char *path)
{
	char from[4096], to[4096];

	/* what is moved aside was never checked, whatever its stamp says */
	(void)removexattr(path, DB_CHECKED_XATTR);
	for (size_t i = 0; i < ELEMENTSOF(db_file_suffixes); i++) {
		snprintf(from, sizeof(from), "%s%s", path, db_file_suffixes[i]);
		snprintf(to, sizeof(to), "%s.broken%s", path,
			 db_file_suffixes[i]);
		if (rename(from, to) < 0 && errno != ENOENT)
			(void)unlink(from);
	}
	log_warning("index '%s' is corrupt or not an iconfs index, moved "
		    "aside to '%s.broken' and rebuilt",
		    path, path);
}

/* Make the index's directory if missing; a new index needs it writable. */
static int index_dir_prepare(const char *path)
{
	g_autofree char *dir = NULL;

	if (streq(path, ":memory:"))
		return 0;
	dir = g_path_get_dirname(path);
	if (g_mkdir_with_parents(dir, 0700) < 0)
		return -errno;
	/* SQLite says "unable to open" (ENOENT) where the directory is
	 * read-only: name the real cause */
	if (access(path, F_OK) < 0 && errno == ENOENT &&
	    access(dir, W_OK | X_OK) < 0)
		return -errno;
	return 0;
}

/* SQLite without its memory statistics, set once per process before its
 * first use: with them every allocation SQLite makes takes one global
 * mutex, and request threads queue on it (half the futex calls of a
 * render run that finds everything stored). Without them no soft heap
 * limit holds: each connection's cache_size (db_session_pragmas, the
 * attached machine's index) is what bounds SQLite's heap. */
static void db_library_setup(void)
{
	(void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

/* sqlite3_open_v2, after db_library_setup. */
static int db_sqlite_open(const char *name, sqlite3 **db, int oflags)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	(void)pthread_once(&once, db_library_setup);
	return sqlite3_open_v2(name, db, oflags, NULL);
}

/* A small page cache per connection and no mmap: the daemon keeps one
 * connection per thread for a whole session, and mapped pages of a growing
 * blob table would count against its RSS. NORMAL sync, which SQLite keeps
 * per connection: in WAL mode a commit is then durable across a process's
 * crash (all a cache needs) without an fdatasync of its own; the blob
 * writer and the working set's notes commit many small transactions. */
static int db_session_pragmas(sqlite3 *db, unsigned flags)
{
	int rc = sqlite3_exec(db,
			      "PRAGMA synchronous = NORMAL;"
			      "PRAGMA foreign_keys = ON;"
			      "PRAGMA temp_store = MEMORY;"
			      "PRAGMA cache_size = -1024;"
			      "PRAGMA mmap_size = 0;",
			      NULL, NULL, NULL);

	/* A request thread's connection looks a few rows up per request:
	 * the inner pages of the index's trees fit in 256 KiB, and the
	 * kernel's page cache holds the rest once for all of them (a mount
	 * has a dozen: at 1 MiB each they held 3 MiB more after 100,000
	 * requests over 18,000 icons). */
	if (rc == SQLITE_OK && flags & DB_QUERY_ONLY)
		rc = sqlite3_exec(db,
				  "PRAGMA query_only = 1;"
				  "PRAGMA cache_size = -256;",
				  NULL, NULL, NULL);
	return db_errno(rc);
}

static int db_open_once(const char *path, unsigned flags, sqlite3 **ret)
{
	_cleanup_(sqlite3_closep) sqlite3 *db = NULL;
	bool empty = false;
	int oflags, rc, r;

	/* URIs: an immutable layer may be attached (db_attach_immutable) */
	oflags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI |
		 (flags & DB_READONLY
			  ? SQLITE_OPEN_READONLY
			  : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
	rc = db_sqlite_open(path, &db, oflags);
	if (rc != SQLITE_OK)
		return db_errno(rc);
	(void)sqlite3_extended_result_codes(db, 1);
	(void)sqlite3_busy_timeout(db, 10000);

	r = db_verify(db, flags, &empty);
	if (r < 0)
		return r;

	if (!(flags & DB_READONLY)) {
		/* A new file gives back the pages of what is dropped
		 * (db_shrink). Only a new one: on a file with tables the
		 * pragma changes nothing, yet writes its first page, a commit
		 * and three fsyncs before a relogin's mount could answer. WAL
		 * lets the daemon's readers run beside the one writer; the
		 * sync level is every connection's (db_session_pragmas), and
		 * NORMAL already here: migrating a file commits too. */
		rc = empty ? sqlite3_exec(db, "PRAGMA auto_vacuum = INCREMENTAL",
					  NULL, NULL, NULL)
			   : SQLITE_OK;
		if (rc == SQLITE_OK)
			rc = sqlite3_exec(db,
					  "PRAGMA journal_mode = WAL;"
					  "PRAGMA synchronous = NORMAL;",
					  NULL, NULL, NULL);
		if (rc != SQLITE_OK)
			return db_errno(rc);
		r = db_migrate(db);
		if (r < 0)
			return r;
	}
	r = db_session_pragmas(db, flags);
	if (r < 0)
		return r;
	if (flags & DB_CHECK)
		db_checked_arm(db);
	*ret = TAKE_PTR(db);
	return 0;
}

int db_connect(const char *path, unsigned flags, int busy_ms, sqlite3 **ret)
{
	_cleanup_(sqlite3_closep) sqlite3 *db = NULL;
	int rc, r;

	rc = db_sqlite_open(path, &db,
			    SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_READWRITE);
	if (rc != SQLITE_OK)
		return log_error_errno(db_errno(rc),
				       "cannot open index '%s': %m", path);
	(void)sqlite3_extended_result_codes(db, 1);
	(void)sqlite3_busy_timeout(db, busy_ms);
	r = db_session_pragmas(db, flags);
	if (r < 0)
		return log_error_errno(r, "cannot open index '%s': %m", path);
	*ret = TAKE_PTR(db);
	return 0;
}

int db_open(const char *path, unsigned flags, sqlite3 **ret)
{
	int r;

	if (!(flags & DB_READONLY)) {
		r = index_dir_prepare(path);
		if (r < 0)
			return log_error_errno(r,
					       "cannot create index '%s': %m",
					       path);
	}
	r = db_open_once(path, flags, ret);
	if (r == -EBADMSG && !(flags & DB_READONLY)) {
		db_move_aside(path);
		r = db_open_once(path, flags, ret);
	}
	if (r == -EPROTONOSUPPORT)
		return log_error_errno(r,
				       "index '%s' was written by a newer "
				       "iconfs (schema newer than %u); left as "
				       "it is",
				       path, schema_migrations_count);
	if (r < 0)
		return log_error_errno(r, "cannot open index '%s': %m", path);
	return 0;
}

int db_meta_set_int(sqlite3 *db, const char *key, long long value)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *stmt = NULL;
	int rc;

	rc = sqlite3_prepare_v2(db,
				"INSERT OR REPLACE INTO meta(key, value) "
				"VALUES (?1, ?2)",
				-1, &stmt, NULL);
	if (rc != SQLITE_OK)
		return db_errno(rc);
	sqlite3_bind_text(stmt, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 2, value);
	rc = sqlite3_step(stmt);
	return rc == SQLITE_DONE ? 0 : db_errno(rc);
}

long long db_meta_get_int(sqlite3 *db, const char *key, long long def)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *stmt = NULL;

	if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = ?1", -1,
			       &stmt, NULL) != SQLITE_OK)
		return def;
	sqlite3_bind_text(stmt, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(stmt) != SQLITE_ROW)
		return def;
	return sqlite3_column_int64(stmt, 0);
}

void db_release_cache(sqlite3 *db)
{
	(void)sqlite3_db_release_memory(db);
}

void db_shrink(sqlite3 *db)
{
	(void)db_exec(db, "PRAGMA incremental_vacuum");
}

char *db_meta_get_text(sqlite3 *db, const char *key)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;

	if (db_query_row(db, &q, "SELECT value FROM meta WHERE key = ?1", "t",
			 key) < 0 ||
	    sqlite3_column_type(q, 0) == SQLITE_NULL)
		return NULL;
	return g_strdup(db_column_str(q, 0));
}

int db_meta_set_text(sqlite3 *db, const char *key, const char *value)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	int r;

	r = db_query(db, &q,
		     value ? "INSERT OR REPLACE INTO meta(key, value) "
			     "VALUES (?1, ?2)"
			   : "DELETE FROM meta WHERE key = ?1",
		     value ? "tt" : "t", key, value);
	if (r < 0)
		return r;
	return db_errno(sqlite3_step(q) == SQLITE_DONE ? SQLITE_OK
						       : sqlite3_errcode(db));
}

void db_unlink(const char *path, bool main_too)
{
	for (size_t i = main_too ? 0 : 1; i < ELEMENTSOF(db_file_suffixes); i++) {
		g_autofree char *p = g_strconcat(path, db_file_suffixes[i], NULL);

		(void)unlink(p);
	}
}

static char *immutable_uri(const char *path)
{
	g_autofree char *escaped = g_uri_escape_string(path, "/", FALSE);

	return g_strconcat("file:", escaped, "?immutable=1", NULL);
}

/* Whether schema `name` of `db` is an index of this iconfs's version. */
static int db_check_version(sqlite3 *db, const char *name)
{
	g_autofree char *app_sql =
		g_strdup_printf("PRAGMA \"%s\".application_id", name);
	g_autofree char *version_sql =
		g_strdup_printf("PRAGMA \"%s\".user_version", name);
	long long app, version;
	int rc;

	app = db_pragma_int(db, app_sql, &rc);
	if (rc != SQLITE_OK || app != ICONFS_APPLICATION_ID)
		return -EBADMSG;
	version = db_pragma_int(db, version_sql, &rc);
	if (rc != SQLITE_OK)
		return -EBADMSG;
	return version == (long long)schema_migrations_count ? 0 : -EPROTO;
}

int db_open_immutable(const char *path, sqlite3 **ret)
{
	_cleanup_(sqlite3_closep) sqlite3 *db = NULL;
	g_autofree char *uri = immutable_uri(path);
	int rc, r;

	rc = db_sqlite_open(uri, &db,
			    SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_READONLY |
				    SQLITE_OPEN_URI);
	if (rc != SQLITE_OK)
		return db_errno(rc);
	(void)sqlite3_extended_result_codes(db, 1);
	r = db_check_version(db, "main");
	if (r < 0)
		return r;
	if (db_exec(db, "PRAGMA query_only = 1") < 0)
		return -EBADMSG;
	*ret = TAKE_PTR(db);
	return 0;
}

int db_attach_immutable(sqlite3 *db, const char *path, const char *name)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	g_autofree char *uri = immutable_uri(path);
	g_autofree char *detach = g_strdup_printf("DETACH \"%s\"", name);
	int r;

	r = db_query(db, &q, "ATTACH ?1 AS ?2", "tt", uri, name);
	if (r < 0)
		return r;
	if (sqlite3_step(q) != SQLITE_DONE)
		return -EBADMSG;
	r = db_check_version(db, name);
	if (r < 0)
		(void)db_exec(db, detach);
	return r;
}

int db_file_trusted(const char *path, const char **ret_why)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		*ret_why = "cannot be read";
		return -errno;
	}
	if (!S_ISREG(st.st_mode) ||
	    (st.st_uid != 0 && st.st_uid != geteuid()) ||
	    st.st_mode & (S_IWGRP | S_IWOTH)) {
		*ret_why = "is not a regular file written only by root or you";
		return -EPERM;
	}
	return 0;
}
