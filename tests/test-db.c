/* Opening the index: a busy index is reported as busy (not EIO), an index
 * of a newer iconfs is refused and left alone, a foreign file is moved
 * aside, and the per-thread connections never check or migrate. */
#include <errno.h>
#include <sys/stat.h>

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
	ASSERT_EQ_INT(scan_refresh(f->db, f->bases, 0, &st, NULL), -EBUSY);
	ASSERT_EQ_INT(db_exec(other, "COMMIT"), 0);
	ASSERT_EQ_INT(scan_refresh(f->db, f->bases, 0, &st, NULL), 0);
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

TEST_MAIN(TEST_CASE(busy_is_busy), TEST_CASE(newer_index_left_alone),
	  TEST_CASE(foreign_moved_aside))
