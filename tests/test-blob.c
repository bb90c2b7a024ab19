/* The rendered-blob table and its writer: stamps decide validity, only
 * this version's verdicts are failures, a row that fails its checksums is
 * a miss (never served, never a crash), the byte budget evicts the least
 * recently used, and the writer serves queued renders from memory while
 * another connection holds the write lock. */
#include <errno.h>
#include <glib.h>
#include <unistd.h>

#include "blob.h"
#include "db.h"
#include "store.h"
#include "test.h"

static char *db_path;
static struct blob_reader *test_reader;

static sqlite3 *open_db(void)
{
	sqlite3 *db = NULL;
	g_autofree char *dir = g_dir_make_tmp("iconfs-blob-XXXXXX", NULL);

	g_free(db_path);
	db_path = g_build_filename(dir, "index.sqlite", NULL);
	return db_open(db_path, 0, &db) < 0 ? NULL : db;
}

/* The reader of the open test index (closed with it). */
static struct blob_reader *reader(sqlite3 *db)
{
	if (!test_reader && blob_reader_new(db, NULL, &test_reader) < 0)
		return NULL;
	return test_reader;
}

static void close_db(sqlite3 *db)
{
	g_autofree char *dir = g_path_get_dirname(db_path);
	g_autofree char *wal = g_strconcat(db_path, "-wal", NULL);
	g_autofree char *shm = g_strconcat(db_path, "-shm", NULL);

	test_reader = blob_reader_free(test_reader);
	sqlite3_close(db);
	(void)unlink(db_path);
	(void)unlink(wal);
	(void)unlink(shm);
	(void)rmdir(dir);
}

TEST(stamps)
{
	sqlite3 *db = open_db();
	struct blob_key k = { "/x/a.svg", 48, 1, 100, 5 };
	void *data = NULL;
	size_t len = 0;

	ASSERT_TRUE(db);
	ASSERT_EQ_INT(blob_get(reader(db), &k, -1, NULL, &len, NULL), -ENOENT);
	ASSERT_EQ_INT(blob_put(db, &k, 0, "png!", 4, NULL), 0);
	ASSERT_EQ_INT(blob_get(reader(db), &k, -1, &data, &len, NULL), 0);
	ASSERT_EQ_INT(len, 4);
	ASSERT_TRUE(memcmp(data, "png!", 4) == 0);
	free(data);
	k.mtime_ns = 6; /* the source changed */
	ASSERT_EQ_INT(blob_get(reader(db), &k, -1, NULL, &len, NULL), -ENOENT);
	ASSERT_EQ_INT(blob_put(db, &k, EINVAL, NULL, 0, NULL), 0);
	ASSERT_EQ_INT(blob_get(reader(db), &k, -1, NULL, &len, NULL), -EIO);
	k.size = 101; /* changed again: the failure is forgotten */
	ASSERT_EQ_INT(blob_get(reader(db), &k, -1, NULL, &len, NULL), -ENOENT);
	ASSERT_EQ_INT(blob_drop_source(db, "/x/a.svg"), 0);
	k.size = 100;
	ASSERT_EQ_INT(blob_get(reader(db), &k, -1, NULL, &len, NULL), -ENOENT);
	close_db(db);
}

TEST(verdict_of_another_version)
{
	sqlite3 *db = open_db();
	struct blob_key k = { "/x/b.svg", 16, 1, 1, 1 };
	size_t len;

	ASSERT_TRUE(db);
	ASSERT_EQ_INT(blob_put(db, &k, EINVAL, NULL, 0, NULL), 0);
	ASSERT_EQ_INT(blob_get(reader(db), &k, -1, NULL, &len, NULL), -EIO);
	/* as if an older iconfs had judged it (checksum made to match by
	 * storing it again is not possible from SQL: the row is a miss
	 * either way, never a failure) */
	ASSERT_EQ_INT(db_exec(db, "UPDATE blob SET judged = '0.0.1'"), 0);
	ASSERT_EQ_INT(blob_get(reader(db), &k, -1, NULL, &len, NULL), -ENOENT);
	close_db(db);
}

/* Every column of a stored row corrupted in turn: a miss each time, and
 * never a crash nor a byte of the damaged row served. */
TEST(corrupt_rows)
{
	static const char *const damage[] = {
		"UPDATE blob SET bytes = bytes + 100",
		"UPDATE blob SET bytes = 1000000000",
		"UPDATE blob SET bytes = -1",
		"UPDATE blob SET px = 32",
		"UPDATE blob SET status = 5",
		"UPDATE blob SET data_crc = data_crc + 1",
		"UPDATE blob SET head_crc = head_crc + 1",
		"UPDATE blob SET src_size = 7",
		"UPDATE blob SET data = substr(data, 1, 10)",
		"UPDATE blob SET data = NULL",
		"UPDATE blob SET data = zeroblob(length(data))",
		"UPDATE blob SET data = 'text'",
	};
	sqlite3 *db = open_db();
	struct blob_key k = { "/x/c.svg", 48, 3, 30, 300 };
	char png[600];

	ASSERT_TRUE(db);
	for (size_t i = 0; i < sizeof(png); i++)
		png[i] = (char)(i * 7);
	for (size_t i = 0; i < ELEMENTSOF(damage); i++) {
		void *data = NULL;
		size_t len = 0;
		int r;

		ASSERT_EQ_INT(blob_put(db, &k, 0, png, sizeof(png), NULL), 0);
		ASSERT_EQ_INT(blob_get(reader(db), &k, -1, NULL, &len, NULL), 0);
		ASSERT_EQ_INT(db_exec(db, damage[i]), 0);
		/* a row moved to another size is asked for at that size */
		k.px = strstr(damage[i], "px =") ? 32 : 48;
		r = blob_get(reader(db), &k, -1, &data, &len, NULL);
		k.px = 48;
		if (r != -ENOENT)
			printf("# damage %zu: %s\n", i, damage[i]);
		ASSERT_EQ_INT(r, -ENOENT);
		ASSERT_TRUE(data == NULL);
		ASSERT_EQ_INT(db_exec(db, "DELETE FROM blob"), 0);
	}
	close_db(db);
}

TEST(budget)
{
	sqlite3 *db = open_db();
	char buf[1000] = { 0 };
	char path[32];
	size_t len;

	ASSERT_TRUE(db);
	for (int i = 0; i < 100; i++) {
		struct blob_key k = { path, 16, i, 1, 1 };
		long long delta = 0;

		snprintf(path, sizeof(path), "/x/%03d.svg", i);
		ASSERT_EQ_INT(blob_put(db, &k, 0, buf, sizeof(buf), &delta), 0);
		ASSERT_EQ_INT(delta, sizeof(buf));
		ASSERT_EQ_INT(blob_touch(db, path, 16, 1000 + i), 0);
	}
	ASSERT_EQ_INT(blob_total(db), 100000);
	ASSERT_EQ_INT(blob_evict(db, 45000, 1000), 45000);
	ASSERT_EQ_INT(blob_total(db), 55000);
	{
		struct blob_key oldest = { "/x/000.svg", 16, 0, 1, 1 };
		struct blob_key kept = { "/x/045.svg", 16, 45, 1, 1 };
		ASSERT_EQ_INT(blob_get(reader(db), &oldest, -1, NULL, &len, NULL),
			      -ENOENT);
		ASSERT_EQ_INT(blob_get(reader(db), &kept, -1, NULL, &len, NULL), 0);
	}
	/* at most max_rows go in one call */
	ASSERT_EQ_INT(blob_evict(db, 1000000, 5), 5000);
	close_db(db);
}

/* A writer that cannot write yet: another connection (as good as another
 * process) holds the index's write lock until the caller commits. */
static int store_held_back(struct store **ret, sqlite3 **ret_other)
{
	int r = db_connect(db_path, 0, 100, ret_other);

	if (r >= 0)
		r = store_new(db_path, NULL, 1 << 20, ret);
	if (r >= 0)
		r = db_exec(*ret_other, "BEGIN IMMEDIATE");
	return r;
}

/* The writer serves what it has not stored yet, stores it once the lock
 * is free, and a reader never waits for it. */
TEST(store_under_lock)
{
	sqlite3 *db = open_db();
	sqlite3 *other = NULL;
	struct store *s = NULL;
	struct blob_key k = { "/x/d.svg", 24, 4, 40, 400 };
	void *data = NULL;
	size_t len = 0;

	ASSERT_TRUE(db);
	ASSERT_EQ_INT(store_held_back(&s, &other), 0);
	store_put(s, &k, 0, "queued", 6, false);
	ASSERT_EQ_INT(store_get_pending(s, &k, &data, &len), 0);
	ASSERT_EQ_INT(len, 6);
	ASSERT_TRUE(memcmp(data, "queued", 6) == 0);
	free(data);
	data = NULL;
	ASSERT_EQ_INT(store_sync(s, 600), -ETIMEDOUT);
	ASSERT_EQ_INT(blob_get(reader(db), &k, -1, NULL, &len, NULL), -ENOENT);
	ASSERT_EQ_INT(db_exec(other, "COMMIT"), 0);
	ASSERT_EQ_INT(store_sync(s, 5000), 0);
	ASSERT_EQ_INT(store_get_pending(s, &k, NULL, &len), -ENOENT);
	ASSERT_EQ_INT(blob_get(reader(db), &k, -1, &data, &len, NULL), 0);
	ASSERT_TRUE(len == 6 && memcmp(data, "queued", 6) == 0);
	free(data);
	/* a drop goes through the writer too */
	store_drop_source(s, "/x/d.svg");
	ASSERT_EQ_INT(store_sync(s, 5000), 0);
	ASSERT_EQ_INT(blob_get(reader(db), &k, -1, NULL, &len, NULL), -ENOENT);
	ASSERT_EQ_INT(store_errors(s), 0);
	store_free(s);
	sqlite3_close(other);
	close_db(db);
}

/* Renders /x/FROM.svg ... /x/TO-1.svg of 1000 bytes at 16 px, each written
 * before the next. */
static int put_renders(struct store *s, int from, int to, bool stat_only)
{
	char buf[1000] = { 0 };
	char path[32];

	for (int i = from; i < to; i++) {
		struct blob_key k = { path, 16, i, 1, 1 };
		int r;

		snprintf(path, sizeof(path), "/x/%03d.svg", i);
		store_put(s, &k, 0, buf, sizeof(buf), stat_only);
		r = store_sync(s, 5000);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The writer holds the table to its budget from its running total. */
TEST(store_budget)
{
	sqlite3 *db = open_db();
	struct store *s = NULL;

	ASSERT_TRUE(db);
	ASSERT_EQ_INT(store_new(db_path, NULL, 50000, &s), 0);
	ASSERT_EQ_INT(put_renders(s, 0, 100, false), 0);
	ASSERT_TRUE(blob_total(db) <= 50000);
	ASSERT_TRUE(blob_total(db) >= 40000);
	store_free(s);
	close_db(db);
}

/* Renders that only answered a stat go first when the budget is full,
 * however recently they were made; the first read lifts one. */
TEST(store_stat_tier)
{
	sqlite3 *db = open_db();
	struct store *s = NULL;
	char path[32];
	size_t len;

	ASSERT_TRUE(db);
	ASSERT_EQ_INT(store_new(db_path, NULL, 60000, &s), 0);
	/* 20 renders read, then 40 that answered stats only (newer) */
	ASSERT_EQ_INT(put_renders(s, 0, 20, false), 0);
	ASSERT_EQ_INT(put_renders(s, 20, 60, true), 0);
	/* one stat-only render is read: an ordinary render from now on */
	store_touch(s, "/x/059.svg", 16);
	ASSERT_EQ_INT(store_sync(s, 5000), 0);
	/* 20 more read renders: over the budget, the stat tier goes first */
	ASSERT_EQ_INT(put_renders(s, 60, 80, false), 0);
	for (int i = 0; i < 80; i++) {
		struct blob_key k = { path, 16, i, 1, 1 };
		bool read = i < 20 || i >= 59;

		snprintf(path, sizeof(path), "/x/%03d.svg", i);
		if (read)
			ASSERT_EQ_INT(blob_get(reader(db), &k, -1, NULL, &len, NULL),
				      0);
	}
	ASSERT_TRUE(blob_total(db) <= 60000);
	store_free(s);
	close_db(db);
}

/* A render queued stat-only and read while it waits for the writer is an
 * ordinary one once stored (the read lifts the lower tier); one only
 * stat'ed stays in it. */
TEST(store_pending_read)
{
	sqlite3 *db = open_db();
	sqlite3 *other = NULL;
	struct store *s = NULL;
	struct blob_key read = { "/x/read.svg", 16, 1, 1, 1 };
	struct blob_key statted = { "/x/stat.svg", 16, 2, 1, 1 };
	long long used = 0;
	void *data = NULL;
	size_t len = 0;

	ASSERT_TRUE(db);
	/* both stay queued while they are asked for */
	ASSERT_EQ_INT(store_held_back(&s, &other), 0);
	store_put(s, &read, 0, "png", 3, true);
	store_put(s, &statted, 0, "png", 3, true);
	for (int i = 0; i < 3; i++) {
		ASSERT_EQ_INT(store_get_pending(s, &read, &data, &len), 0);
		ASSERT_TRUE(len == 3 && memcmp(data, "png", 3) == 0);
		free(data);
		data = NULL;
	}
	ASSERT_EQ_INT(store_get_pending(s, &statted, NULL, &len), 0);
	ASSERT_EQ_INT(db_exec(other, "COMMIT"), 0);
	ASSERT_EQ_INT(store_sync(s, 5000), 0);
	ASSERT_EQ_INT(blob_get(reader(db), &read, -1, NULL, &len, &used), 0);
	ASSERT_TRUE(used > (long long)time(NULL) - 60);
	ASSERT_EQ_INT(blob_get(reader(db), &statted, -1, NULL, &len, &used), 0);
	ASSERT_TRUE(used < (long long)time(NULL) - BLOB_STAT_TIER / 2);
	ASSERT_EQ_INT(store_errors(s), 0);
	store_free(s);
	sqlite3_close(other);
	close_db(db);
}

TEST_MAIN(TEST_CASE(stamps), TEST_CASE(verdict_of_another_version),
	  TEST_CASE(corrupt_rows), TEST_CASE(budget),
	  TEST_CASE(store_under_lock), TEST_CASE(store_budget),
	  TEST_CASE(store_stat_tier), TEST_CASE(store_pending_read))
