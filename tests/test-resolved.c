/* The resolved cache (resolved.h): what is kept for a view's icon at one
 * index generation is taken once, by exactly that view, name and
 * generation; a new generation drops what an older one kept; the cache is
 * bounded; a NULL cache keeps and gives nothing. */
#include "resolved.h"
#include "test.h"

/* A resolved icon whose source is `source`. */
static struct icon_content content_of(const char *source, uint64_t size)
{
	return (struct icon_content){ .source = g_strdup(source),
				      .native = 1,
				      .size = size };
}

TEST(keep_and_take)
{
	struct resolved *p = resolved_new();
	struct icon_content ic = content_of("/i/t/16/a.png", 123), got = { 0 };

	resolved_keep(p, "t", 16, 1, "a", 7, &ic);
	/* moved: the caller's is empty */
	ASSERT_TRUE(ic.source == NULL);
	/* another view, name or generation: not this one */
	ASSERT_TRUE(!resolved_take(p, "t", 16, 2, "a", 7, &got));
	ASSERT_TRUE(!resolved_take(p, "t", 24, 1, "a", 7, &got));
	ASSERT_TRUE(!resolved_take(p, "u", 16, 1, "a", 7, &got));
	ASSERT_TRUE(!resolved_take(p, "t", 16, 1, "b", 7, &got));
	ASSERT_TRUE(!resolved_take(p, "t", 16, 1, "a", 8, &got));
	ASSERT_EQ_INT(resolved_taken(p), 0);
	ASSERT_TRUE(resolved_take(p, "t", 16, 1, "a", 7, &got));
	ASSERT_EQ_STR(got.source, "/i/t/16/a.png");
	ASSERT_EQ_INT(got.size, 123);
	ASSERT_EQ_INT(got.native, 1);
	icon_content_clear(&got);
	/* once */
	ASSERT_TRUE(!resolved_take(p, "t", 16, 1, "a", 7, &got));
	ASSERT_EQ_INT(resolved_taken(p), 1);
	/* kept again for the same icon: the newer wins */
	ic = content_of("/old", 1);
	resolved_keep(p, "t", 16, 1, "a", 7, &ic);
	ic = content_of("/new", 2);
	resolved_keep(p, "t", 16, 1, "a", 7, &ic);
	ASSERT_TRUE(resolved_take(p, "t", 16, 1, "a", 7, &got));
	ASSERT_EQ_STR(got.source, "/new");
	icon_content_clear(&got);
	ASSERT_EQ_INT(resolved_taken(p), 2);
	resolved_free(p);
}

TEST(generations)
{
	struct resolved *p = resolved_new();
	struct icon_content ic = content_of("/a", 1), got = { 0 };

	resolved_keep(p, "t", 16, 1, "a", 1, &ic);
	ic = content_of("/b", 2);
	resolved_keep(p, "t", 16, 1, "b", 2, &ic);
	/* the index changed: what generation 1 resolved is gone */
	ASSERT_TRUE(!resolved_take(p, "t", 16, 1, "a", 1, &got));
	ASSERT_TRUE(!resolved_take(p, "t", 16, 1, "a", 2, &got));
	ASSERT_TRUE(resolved_take(p, "t", 16, 1, "b", 2, &got));
	ASSERT_EQ_STR(got.source, "/b");
	icon_content_clear(&got);
	/* what is left at the end is freed with the table (valgrind) */
	ic = content_of("/c", 3);
	resolved_keep(p, "t", 16, 1, "c", 2, &ic);
	resolved_free(p);
}

TEST(bounded)
{
	struct resolved *p = resolved_new();
	struct icon_content got = { 0 };
	char name[32];

	/* more than a listing's stats could want: the table starts again */
	for (int i = 0; i < 5000; i++) {
		struct icon_content ic = content_of("/x", (uint64_t)i);

		(void)snprintf(name, sizeof(name), "icon-%d", i);
		resolved_keep(p, "t", 16, 1, name, 1, &ic);
	}
	ASSERT_TRUE(!resolved_take(p, "t", 16, 1, "icon-0", 1, &got));
	ASSERT_TRUE(resolved_take(p, "t", 16, 1, "icon-4999", 1, &got));
	ASSERT_EQ_INT(got.size, 4999);
	icon_content_clear(&got);
	resolved_free(p);
}

TEST(no_table)
{
	struct icon_content ic = content_of("/a", 1), got = { 0 };

	/* keeps nothing: the caller's stays the caller's */
	resolved_keep(NULL, "t", 16, 1, "a", 1, &ic);
	ASSERT_EQ_STR(ic.source, "/a");
	icon_content_clear(&ic);
	ASSERT_TRUE(!resolved_take(NULL, "t", 16, 1, "a", 1, &got));
	ASSERT_EQ_INT(resolved_taken(NULL), 0);
	ASSERT_TRUE(resolved_free(NULL) == NULL);
}

TEST_MAIN(TEST_CASE(keep_and_take), TEST_CASE(generations), TEST_CASE(bounded),
	  TEST_CASE(no_table))
