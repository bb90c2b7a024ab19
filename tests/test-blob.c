/* The rendered-blob table: stamps decide validity, failures are
 * remembered, and the byte budget evicts the least recently used. */
#include <errno.h>

#include "blob.h"
#include "db.h"
#include "test.h"

static sqlite3 *open_db(void)
{
	sqlite3 *db = NULL;
	return db_open(":memory:", 0, &db) < 0 ? NULL : db;
}

TEST(stamps)
{
	sqlite3 *db = open_db();
	struct blob_key k = { "/x/a.svg", 48, 1, 100, 5 };
	void *data = NULL;
	size_t len = 0;

	ASSERT_TRUE(db);
	ASSERT_EQ_INT(blob_get(db, &k, NULL, &len), -ENOENT);
	ASSERT_EQ_INT(blob_put(db, &k, 0, "png!", 4), 0);
	ASSERT_EQ_INT(blob_get(db, &k, &data, &len), 0);
	ASSERT_EQ_INT(len, 4);
	ASSERT_TRUE(memcmp(data, "png!", 4) == 0);
	free(data);
	k.mtime_ns = 6; /* the source changed */
	ASSERT_EQ_INT(blob_get(db, &k, NULL, &len), -ENOENT);
	ASSERT_EQ_INT(blob_put(db, &k, EIO, NULL, 0), 0);
	ASSERT_EQ_INT(blob_get(db, &k, NULL, &len), -EIO);
	k.size = 101; /* changed again: the failure is forgotten */
	ASSERT_EQ_INT(blob_get(db, &k, NULL, &len), -ENOENT);
	ASSERT_EQ_INT(blob_drop_source(db, "/x/a.svg"), 0);
	k.size = 100;
	ASSERT_EQ_INT(blob_get(db, &k, NULL, &len), -ENOENT);
	sqlite3_close(db);
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
		snprintf(path, sizeof(path), "/x/%03d.svg", i);
		ASSERT_EQ_INT(blob_put(db, &k, 0, buf, sizeof(buf)), 0);
		/* make "used" increase with i */
		ASSERT_EQ_INT(db_exec(db, "UPDATE blob SET used = CAST(substr("
					  "source, 4, 3) AS INTEGER)"),
			      0);
	}
	ASSERT_EQ_INT(blob_trim(db, 200000), 0);
	ASSERT_TRUE(blob_trim(db, 50000) >= 55000);
	{
		struct blob_key oldest = { "/x/000.svg", 16, 0, 1, 1 };
		struct blob_key newest = { "/x/099.svg", 16, 99, 1, 1 };
		ASSERT_EQ_INT(blob_get(db, &oldest, NULL, &len), -ENOENT);
		ASSERT_EQ_INT(blob_get(db, &newest, NULL, &len), 0);
	}
	sqlite3_close(db);
}

TEST_MAIN(TEST_CASE(stamps), TEST_CASE(budget))
