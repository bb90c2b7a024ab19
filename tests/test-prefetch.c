/* Rendering listed views ahead (prefetch.h): a listing alone resolves
 * nothing; the first stat of one of its entries starts its prefetch, which
 * resolves the listed icons (symbolic names left out in a size view) and
 * keeps them in the resolved cache for their LOOKUP; once per view and index
 * generation, under whichever directory. One prefetch thread: the names
 * are resolved in order. */
#include "resolved.h"
#include "prefetch.h"
#include "test.h"
#include "time-util.h"
#include "tree-fixture.h"

struct ctx {
	struct tree_fixture c;
	struct resolved *resolved;
	struct prefetch *pf;
	GPtrArray *names;
};

static int setup(struct ctx *x)
{
	if (tree_fixture_setup(&x->c, NULL) < 0)
		return -1;
	x->resolved = resolved_new();
	x->names = g_ptr_array_new();
	/* the symbolic one first: done before the last one is */
	g_ptr_array_add(x->names, "b-symbolic");
	g_ptr_array_add(x->names, "a");
	g_ptr_array_add(x->names, "c");
	g_ptr_array_add(x->names, "loose");
	g_ptr_array_add(x->names, "h");
	return prefetch_new(x->c.f->db_path, LOOKUP_RULES_GTK, 1, x->c.content,
			    x->resolved, &x->pf);
}

static void teardown(struct ctx *x)
{
	prefetch_free(x->pf);
	resolved_free(x->resolved);
	g_ptr_array_unref(x->names);
	tree_fixture_teardown(&x->c);
}

/* Take what was kept for `name` of t's 16 px view at `gen`, waiting up to
 * `ms` for it; its source (g_free), or NULL. */
static char *taken(struct ctx *x, const char *name, uint64_t gen, int ms)
{
	long long until = now_ms() + ms;
	struct icon_content ic = { 0 };

	for (;;) {
		if (resolved_take(x->resolved, "t", 16, 1, name, gen, &ic)) {
			char *source = g_strdup(ic.source);

			icon_content_clear(&ic);
			return source;
		}
		if (now_ms() >= until)
			return NULL;
		g_usleep(10 * 1000);
	}
}

TEST(stat_starts_it)
{
	struct ctx x = { 0 };
	g_autofree char *h = NULL, *a = NULL, *none = NULL, *sym = NULL;

	ASSERT_EQ_INT(setup(&x), 0);
	prefetch_listed(x.pf, 100, "t", 16, 1, x.names, true, 1);
	/* listed only: nothing resolved, not being stat'ed */
	none = taken(&x, "h", 1, 200);
	ASSERT_TRUE(none == NULL);
	ASSERT_TRUE(!prefetch_statted(x.pf, 100));
	/* a directory never listed */
	ASSERT_TRUE(!prefetch_stat(x.pf, 101));
	ASSERT_TRUE(prefetch_stat(x.pf, 100));
	ASSERT_TRUE(prefetch_statted(x.pf, 100));
	/* h, the last name: the 64 px hicolor icon, resolved for 16 px */
	h = taken(&x, "h", 1, 10000);
	ASSERT_TRUE(h != NULL);
	ASSERT_TRUE(g_str_has_suffix(h, "/hicolor/64/h.png"));
	a = taken(&x, "a", 1, 0);
	ASSERT_TRUE(a != NULL);
	ASSERT_TRUE(g_str_has_suffix(a, "/t/16/a.png"));
	/* not a symbolic name in a size view */
	sym = taken(&x, "b-symbolic", 1, 0);
	ASSERT_TRUE(sym == NULL);
	ASSERT_EQ_INT(resolved_taken(x.resolved), 2);
	teardown(&x);
}

TEST(once_per_generation)
{
	struct ctx x = { 0 };
	g_autofree char *first = NULL, *again = NULL, *next = NULL;

	ASSERT_EQ_INT(setup(&x), 0);
	prefetch_listed(x.pf, 100, "t", 16, 1, x.names, false, 1);
	ASSERT_TRUE(prefetch_stat(x.pf, 100));
	first = taken(&x, "h", 1, 10000);
	ASSERT_TRUE(first != NULL);
	/* listed and stat'ed again at the same generation: not again */
	prefetch_listed(x.pf, 100, "t", 16, 1, x.names, false, 1);
	ASSERT_TRUE(prefetch_stat(x.pf, 100));
	/* the same view under another directory (the flat view of the
	 * default theme, 16/, is icons/t/16x16/ again) */
	prefetch_listed(x.pf, 200, "t", 16, 1, x.names, false, 1);
	ASSERT_TRUE(prefetch_stat(x.pf, 200));
	again = taken(&x, "h", 1, 300);
	ASSERT_TRUE(again == NULL);
	/* the index changed: listed anew, prefetched anew */
	prefetch_listed(x.pf, 100, "t", 16, 1, x.names, false, 2);
	ASSERT_TRUE(!prefetch_statted(x.pf, 100));
	ASSERT_TRUE(prefetch_stat(x.pf, 100));
	next = taken(&x, "h", 2, 10000);
	ASSERT_TRUE(next != NULL);
	teardown(&x);
}

TEST(no_prefetch)
{
	ASSERT_TRUE(!prefetch_stat(NULL, 100));
	ASSERT_TRUE(!prefetch_statted(NULL, 100));
	ASSERT_TRUE(prefetch_free(NULL) == NULL);
}

TEST_MAIN(TEST_CASE(stat_starts_it), TEST_CASE(once_per_generation),
	  TEST_CASE(no_prefetch))
