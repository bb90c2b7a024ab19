/* Opening the index: a busy index is reported as busy (not EIO), an index
 * of a newer iconfs is refused and left alone, a foreign file is moved
 * aside, the per-thread connections never check or migrate, and a file
 * left as a checked connection closed it is not checked again; opening an
 * index writes nothing to it, and no connection's commit waits for the
 * disk. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>

#include "fixture.h"
#include "scan.h"
#include "test.h"

TEST(busy_is_busy)
{
	struct fixture *f = fixture_new();
	sqlite3 *other = NULL;
	struct scan_stats st;

	fixture_themes(f);
	ASSERT_EQ_INT(fixture_index(f), 0);
	ASSERT_EQ_INT(db_connect(f->db_path, 0, 10, &other), 0);
	ASSERT_EQ_INT(db_exec(other, "BEGIN IMMEDIATE"), 0);
	sqlite3_busy_timeout(f->db, 50);
	fixture_png(f, "t/16/new.png", 16);
	/* the refresh meets the lock: -EBUSY, which SQLite's and errno's
	 * codes sharing one int once turned into -EIO */
	ASSERT_EQ_INT(scan_refresh(f->db, f->bases, 0, NULL, &st, NULL), -EBUSY);
	ASSERT_EQ_INT(db_exec(other, "COMMIT"), 0);
	ASSERT_EQ_INT(scan_refresh(f->db, f->bases, 0, NULL, &st, NULL), 0);
	sqlite3_close(other);
	fixture_free(f);
}

TEST(newer_index_left_alone)
{
	struct fixture *f = fixture_new();
	g_autofree char *broken = NULL;
	sqlite3 *db = NULL;
	struct stat before, after;

	fixture_themes(f);
	ASSERT_EQ_INT(fixture_index(f), 0);
	ASSERT_EQ_INT(db_exec(f->db, "PRAGMA user_version = 999"), 0);
	ASSERT_EQ_INT(stat(f->db_path, &before), 0);
	ASSERT_EQ_INT(db_open(f->db_path, 0, &db), -EPROTONOSUPPORT);
	ASSERT_EQ_INT(db_open(f->db_path, DB_READONLY, &db), -EPROTONOSUPPORT);
	ASSERT_EQ_INT(stat(f->db_path, &after), 0);
	ASSERT_EQ_INT(after.st_ino, before.st_ino);
	broken = g_strconcat(f->db_path, ".broken", NULL);
	ASSERT_TRUE(!g_file_test(broken, G_FILE_TEST_EXISTS));
	/* a further connection does not care: it neither checks nor moves */
	ASSERT_EQ_INT(db_connect(f->db_path, DB_QUERY_ONLY, 10, &db), 0);
	ASSERT_EQ_INT(db_exec(db, "CREATE TABLE x(y)"), -EROFS);
	sqlite3_close(db);
	fixture_free(f);
}

/* Migration 6: renders of bitmaps (scaled with another filter than GTK's)
 * go, renders of SVGs stay. */
TEST(bitmap_renders_dropped)
{
	struct fixture *f = fixture_new();
	sqlite3 *db = NULL;
	sqlite3_stmt *q = NULL;

	fixture_themes(f);
	ASSERT_EQ_INT(fixture_index(f), 0);
	ASSERT_EQ_INT(db_exec(f->db,
			      "INSERT INTO blob(source, px, src_ino, src_size, "
			      "src_mtime_ns, status, bytes, data_crc, head_crc, "
			      "used) VALUES ('/i/a.png', 24, 1, 1, 1, 0, 0, 0, 0, 0), "
			      "('/i/b.xpm', 24, 1, 1, 1, 0, 0, 0, 0, 0), "
			      "('/i/c.svg', 24, 1, 1, 1, 0, 0, 0, 0, 0);"),
		      0);
	ASSERT_EQ_INT(fixture_downgrade(f, 5), 0);
	ASSERT_EQ_INT(db_open(f->db_path, 0, &db), 0);
	ASSERT_EQ_INT(db_query_row(db, &q, "SELECT group_concat(source) FROM blob", ""), 0);
	ASSERT_EQ_STR(db_column_str(q, 0), "/i/c.svg");
	sqlite3_finalize(q);
	sqlite3_close(db);
	fixture_free(f);
}

/* Migration 7: KDE's keys and the directories' contexts come from each
 * theme's index.theme, read again at the first refresh after it. */
TEST(kde_keys_read_again)
{
	struct fixture *f = fixture_new();
	sqlite3_stmt *q = NULL;

	fixture_write(f, "k/index.theme",
		      "[Icon Theme]\nName=K\nDesktopDefault=48\n"
		      "DesktopSizes=16,48\nFollowsColorScheme=true\n"
		      "Directories=16,legacy\n\n[16]\nSize=16\nContext=Places\n\n"
		      "[legacy]\nSize=16\nContext=Legacy\n",
		      -1);
	fixture_png(f, "k/16/a.png", 16);
	ASSERT_EQ_INT(fixture_index(f), 0);
	ASSERT_EQ_INT(fixture_downgrade(f, 6), 0);
	ASSERT_EQ_INT(fixture_index(f), 0);
	ASSERT_EQ_INT(db_query_row(f->db, &q,
				   "SELECT kde_keys FROM theme WHERE name = 'k'", ""),
		      0);
	ASSERT_EQ_STR(db_column_str(q, 0), "DesktopDefault=48\nDesktopSizes=16,48\n"
					   "FollowsColorScheme=true\n");
	sqlite3_finalize(q);
	ASSERT_EQ_INT(db_query_row(f->db, &q,
				   "SELECT group_concat(path || ':' || context, ' ') "
				   "FROM (SELECT * FROM subdir ORDER BY pos)", ""),
		      0);
	ASSERT_EQ_STR(db_column_str(q, 0), "16:Places legacy:Legacy");
	sqlite3_finalize(q);
	fixture_free(f);
}

TEST(foreign_moved_aside)
{
	struct fixture *f = fixture_new();
	g_autofree char *broken = g_strconcat(f->db_path, ".broken", NULL);
	sqlite3 *db = NULL;

	ASSERT_EQ_INT(db_open(f->db_path, 0, &db), 0);
	ASSERT_EQ_INT(db_exec(db, "PRAGMA application_id = 42"), 0);
	sqlite3_close(db);
	ASSERT_EQ_INT(db_open(f->db_path, 0, &db), 0);
	ASSERT_TRUE(g_file_test(broken, G_FILE_TEST_EXISTS));
	sqlite3_close(db);
	fixture_free(f);
}

/* A filesystem without user xattrs (some network filesystems), made by
 * standing in for libc's calls: set, they fail as there. */
static bool xattr_unsupported;

ssize_t getxattr(const char *path, const char *name, void *value, size_t size)
{
	if (xattr_unsupported)
		return errno = ENOTSUP, -1;
	return syscall(SYS_getxattr, path, name, value, size);
}

int setxattr(const char *path, const char *name, const void *value, size_t size,
	     int flags)
{
	if (xattr_unsupported)
		return errno = ENOTSUP, -1;
	return (int)syscall(SYS_setxattr, path, name, value, size, flags);
}

int removexattr(const char *path, const char *name)
{
	if (xattr_unsupported)
		return errno = ENOTSUP, -1;
	return (int)syscall(SYS_removexattr, path, name);
}

/* An index of the fixture themes, checked and closed, and where the root
 * page of its table `icon` is. */
static int checked_index(struct fixture *f, off_t *ret_page, size_t *ret_size)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	sqlite3 *db = NULL;
	int r;

	fixture_themes(f);
	if (fixture_index(f) < 0)
		return -1;
	lookup_free(f->l);
	sqlite3_close(f->db);
	f->l = NULL;
	f->db = NULL;
	r = db_open(f->db_path, DB_CHECK, &db);
	if (r >= 0)
		r = db_query_row(db, &q,
				 "SELECT rootpage, (SELECT page_size FROM "
				 "pragma_page_size) FROM sqlite_schema "
				 "WHERE name = 'icon'",
				 "");
	if (r >= 0) {
		*ret_page = sqlite3_column_int64(q, 0);
		*ret_size = (size_t)sqlite3_column_int64(q, 1);
	}
	sqlite3_finalize(TAKE_PTR(q));
	sqlite3_close(db);
	return r;
}

/* A stray write outside SQLite: 0xff over a whole b-tree page. With
 * `keep_mtime` the file's mtime is put back as it was. */
static int damage_page(const char *path, off_t page, size_t size,
		       bool keep_mtime)
{
	_cleanup_free_ char *junk = malloc(size);
	struct stat st;
	int fd, r = 0;

	if (!junk || stat(path, &st) < 0)
		return -1;
	memset(junk, 0xff, size);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (pwrite(fd, junk, size, (page - 1) * (off_t)size) != (ssize_t)size)
		r = -1;
	close(fd);
	if (keep_mtime &&
	    utimensat(AT_FDCWD, path,
		      (struct timespec[]){ st.st_atim, st.st_mtim }, 0) < 0)
		r = -1;
	return r;
}

/* The stamp a checked connection leaves: inode, size and mtime. */
static char *stamp_of(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return NULL;
	return g_strdup_printf(
		"%llu %lld %lld.%09ld", (unsigned long long)st.st_ino,
		(long long)st.st_size, (long long)st.st_mtim.tv_sec,
		(long)st.st_mtim.tv_nsec);
}

static char *stamp_stored(const char *path)
{
	char buf[128];
	ssize_t n = getxattr(path, "user.iconfs.checked", buf, sizeof(buf) - 1);

	return n < 0 ? NULL : g_strndup(buf, (gsize)n);
}

TEST(checked_file_not_checked_again)
{
	struct fixture *f = fixture_new();
	g_autofree char *broken = g_strconcat(f->db_path, ".broken", NULL);
	g_autofree char *stamp = NULL, *stored = NULL, *on_broken = NULL;
	sqlite3 *db = NULL;
	size_t size = 0;
	off_t page = 0;

	ASSERT_EQ_INT(checked_index(f, &page, &size), 0);
	ASSERT_TRUE(page > 1);
	stamp = stamp_of(f->db_path);
	stored = stamp_stored(f->db_path);
	ASSERT_EQ_STR(stored, stamp);

	/* damage that keeps the stamp is not looked for: the check did not
	 * run (the documented limit, and the proof that it is skipped) */
	ASSERT_EQ_INT(damage_page(f->db_path, page, size, true), 0);
	ASSERT_EQ_INT(db_open(f->db_path, DB_READONLY | DB_CHECK, &db), 0);
	sqlite3_close(db);

	/* the same damage with the mtime it brings is found, and moved aside
	 * without its stamp */
	ASSERT_EQ_INT(damage_page(f->db_path, page, size, false), 0);
	ASSERT_EQ_INT(db_open(f->db_path, DB_READONLY | DB_CHECK, &db),
		      -EBADMSG);
	ASSERT_EQ_INT(db_open(f->db_path, DB_CHECK, &db), 0);
	sqlite3_close(db);
	ASSERT_TRUE(g_file_test(broken, G_FILE_TEST_EXISTS));
	on_broken = stamp_stored(broken);
	ASSERT_TRUE(on_broken == NULL);
	g_free(stamp);
	g_free(stored);
	stamp = stamp_of(f->db_path);
	stored = stamp_stored(f->db_path);
	ASSERT_EQ_STR(stored, stamp);
	fixture_free(f);
}

TEST(crash_means_check)
{
	struct fixture *f = fixture_new();
	sqlite3 *db = NULL;
	size_t size = 0;
	off_t page = 0;
	pid_t pid;
	int status;

	ASSERT_EQ_INT(checked_index(f, &page, &size), 0);
	ASSERT_EQ_INT(damage_page(f->db_path, page, size, true), 0);
	/* a process that commits and dies without closing leaves its WAL,
	 * and the main file as it was */
	pid = fork();
	if (pid == 0) {
		if (db_connect(f->db_path, 0, 1000, &db) < 0 ||
		    db_meta_set_int(db, "crashed", 1) < 0)
			_exit(1);
		_exit(0);
	}
	ASSERT_TRUE(pid > 0);
	ASSERT_EQ_INT(waitpid(pid, &status, 0), pid);
	ASSERT_EQ_INT(status, 0);
	ASSERT_EQ_INT(db_open(f->db_path, DB_READONLY | DB_CHECK, &db),
		      -EBADMSG);
	fixture_free(f);
}

TEST(no_xattrs_always_checked)
{
	struct fixture *f = fixture_new();
	g_autofree char *stored = NULL;
	sqlite3 *db = NULL;
	size_t size = 0;
	off_t page = 0;

	xattr_unsupported = true;
	ASSERT_EQ_INT(checked_index(f, &page, &size), 0);
	xattr_unsupported = false;
	stored = stamp_stored(f->db_path);
	ASSERT_TRUE(stored == NULL);
	xattr_unsupported = true;
	ASSERT_EQ_INT(damage_page(f->db_path, page, size, true), 0);
	ASSERT_EQ_INT(db_open(f->db_path, DB_READONLY | DB_CHECK, &db),
		      -EBADMSG);
	ASSERT_EQ_INT(db_open(f->db_path, DB_CHECK, &db), 0);
	sqlite3_close(db);
	xattr_unsupported = false;
	fixture_free(f);
}

/* A new index gives pages back (auto_vacuum INCREMENTAL); opening it again,
 * as every mount does before it answers, writes nothing: no commit, so no
 * fsync on the way to a relogin's first answer. */
TEST(open_writes_nothing)
{
	struct fixture *f = fixture_new();
	g_autofree char *wal = g_strconcat(f->db_path, "-wal", NULL);
	sqlite3_stmt *q = NULL;
	sqlite3 *db = NULL;
	struct stat st;

	ASSERT_EQ_INT(db_open(f->db_path, DB_CHECK, &db), 0);
	ASSERT_EQ_INT(db_query_row(db, &q, "PRAGMA auto_vacuum", ""), 0);
	ASSERT_EQ_INT(sqlite3_column_int(q, 0), 2);
	sqlite3_finalize(q);
	sqlite3_close(db);
	ASSERT_TRUE(!g_file_test(wal, G_FILE_TEST_EXISTS));
	ASSERT_EQ_INT(db_open(f->db_path, DB_CHECK, &db), 0);
	ASSERT_EQ_INT(stat(wal, &st), 0);
	ASSERT_EQ_INT(st.st_size, 0);
	sqlite3_close(db);
	fixture_free(f);
}

/* Every connection commits at NORMAL sync, the blob writer's and the
 * working set's (db_connect) as much as the first one's (db_open): SQLite
 * keeps the level per connection, and at its default (FULL) each of their
 * small commits cost an fdatasync, one per render stored. */
static int sync_level(sqlite3 *db)
{
	sqlite3_stmt *q = NULL;
	int level;

	if (db_query_row(db, &q, "PRAGMA synchronous", "") < 0)
		return -1;
	level = sqlite3_column_int(q, 0);
	sqlite3_finalize(q);
	return level;
}

TEST(normal_sync_everywhere)
{
	struct fixture *f = fixture_new();
	sqlite3 *writer = NULL, *reader = NULL;

	fixture_themes(f);
	ASSERT_EQ_INT(fixture_index(f), 0);
	ASSERT_EQ_INT(sync_level(f->db), 1);
	ASSERT_EQ_INT(db_connect(f->db_path, 0, 10, &writer), 0);
	ASSERT_EQ_INT(sync_level(writer), 1);
	ASSERT_EQ_INT(db_connect(f->db_path, DB_QUERY_ONLY, 10, &reader), 0);
	ASSERT_EQ_INT(sync_level(reader), 1);
	sqlite3_close(reader);
	sqlite3_close(writer);
	fixture_free(f);
}

TEST_MAIN(TEST_CASE(busy_is_busy), TEST_CASE(newer_index_left_alone),
	  TEST_CASE(bitmap_renders_dropped), TEST_CASE(kde_keys_read_again),
	  TEST_CASE(foreign_moved_aside),
	  TEST_CASE(checked_file_not_checked_again),
	  TEST_CASE(crash_means_check), TEST_CASE(no_xattrs_always_checked),
	  TEST_CASE(open_writes_nothing), TEST_CASE(normal_sync_everywhere))
