/* What the kernel must forget of the tree (tree.h, tree-inval.c): at a
 * switch of the default theme the flat views it holds, their entries and
 * the misses below them, nothing of icons/; past the node table's bound
 * the entries of the least recently used files, never a directory, and
 * the evictor woken once the nodes outgrow it; at a
 * change of the index the named icons' entries and misses. */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>

#include "test.h"
#include "tree-fixture.h"

/* "ino N" or "entry PARENT/NAME" per invalidation, with inode numbers
 * replaced by the names `inos` gives them (ino → path; "." the root),
 * joined by ", ". */
static char *describe(GArray *out, GHashTable *inos)
{
	GString *s = g_string_new(NULL);

	for (unsigned i = 0; i < out->len; i++) {
		struct tree_inval *v =
			&g_array_index(out, struct tree_inval, i);
		uint64_t ino = v->name ? v->parent : v->ino;
		const char *path = g_hash_table_lookup(inos, &ino);

		g_string_append_printf(s, "%s%s %s%s%s", i ? ", " : "",
				       v->name ? "entry" : "ino",
				       path ? path : "?", v->name ? "/" : "",
				       v->name ? v->name : "");
	}
	return g_string_free(s, FALSE);
}

/* Walk `path`, and name its inode (and its parents') in `inos`. */
static int walk_named(struct tree_fixture *c, const char *path,
		      GHashTable *inos)
{
	g_auto(GStrv) parts = g_strsplit(path, "/", -1);
	GString *sofar = g_string_new(NULL);
	uint64_t ino = TREE_ROOT_INO;
	struct stat st;
	double timeout;
	int r = 0;

	for (char **p = parts; *p && r >= 0; p++) {
		uint64_t *key = g_new(uint64_t, 1);

		r = tree_lookup(c->tree, &c->x, REQUEST_RENDER, ino, *p, &ino,
				&st, &timeout);
		g_string_append_printf(sofar, "%s%s", sofar->len ? "/" : "",
				       *p);
		*key = ino;
		if (r >= 0)
			g_hash_table_replace(inos, key, g_strdup(sofar->str));
		else
			g_free(key);
	}
	g_string_free(sofar, TRUE);
	return r;
}

static GHashTable *names_of_inos(void)
{
	GHashTable *inos = g_hash_table_new_full(g_int64_hash, g_int64_equal,
						 g_free, g_free);
	uint64_t *root = g_new(uint64_t, 1);

	*root = TREE_ROOT_INO;
	g_hash_table_replace(inos, root, g_strdup("."));
	return inos;
}

TEST(default_theme_switch)
{
	struct tree_fixture c = { 0 };
	g_autoptr(GHashTable) inos = names_of_inos();
	g_autoptr(GArray) out =
		g_array_new(FALSE, FALSE, sizeof(struct tree_inval));
	g_autofree char *text = NULL, *theme = NULL;

	ASSERT_EQ_INT(tree_fixture_setup(&c, NULL), 0);
	ASSERT_EQ_INT(walk_named(&c, "48/a.png", inos), 0);
	ASSERT_EQ_INT(walk_named(&c, "48/nope.png", inos), -ENOENT);
	ASSERT_EQ_INT(walk_named(&c, "icons/t/16x16/a.png", inos), 0);
	ASSERT_EQ_INT(walk_named(&c, "icons/t/16x16/nope.png", inos), -ENOENT);
	ASSERT_EQ_INT(tree_fixture_negatives(c.tree), 2);
	tree_set_default_theme(c.tree, "parent", "gsettings", out);
	theme = tree_default_theme(c.tree);
	ASSERT_EQ_STR(theme, "parent");
	/* the flat view, its entry, the miss below it, the root; nothing of
	 * icons/, whose miss stays held */
	text = describe(out, inos);
	ASSERT_EQ_STR(text, "ino 48, entry ./48, entry 48/nope.png, ino .");
	ASSERT_EQ_INT(tree_fixture_negatives(c.tree), 1);
	tree_inval_clear(out);
	ASSERT_EQ_INT(out->len, 0);
	tree_fixture_teardown(&c);
}

TEST(evictions)
{
	struct tree_fixture c = { 0 };
	g_autoptr(GHashTable) inos = names_of_inos();
	g_autoptr(GArray) out =
		g_array_new(FALSE, FALSE, sizeof(struct tree_inval));
	g_autofree char *text = NULL;
	unsigned nodes, negatives;
	size_t bytes;
	uint64_t ino;
	struct stat st;
	double timeout;

	ASSERT_EQ_INT(tree_fixture_setup(&c, NULL), 0);
	ASSERT_EQ_INT(walk_named(&c, "icons/t/16x16/a.png", inos), 0);
	ASSERT_EQ_INT(walk_named(&c, "icons/t/16x16/c.png", inos), 0);
	ASSERT_EQ_INT(walk_named(&c, "icons/t/index.theme", inos), 0);
	/* a.png used again: the most recently used */
	ASSERT_EQ_INT(tree_fixture_walk(&c, "icons/t/16x16/a.png", &ino, &st,
					&timeout),
		      0);
	ASSERT_EQ_INT(tree_node_get(c.tree, ino, NULL, &st), 0);
	tree_held(c.tree, &nodes, &negatives, &bytes);
	/* within the bound: nothing */
	tree_collect_evictions(c.tree, bytes, out);
	ASSERT_EQ_INT(out->len, 0);
	/* past it: files only, the least recently used first */
	tree_collect_evictions(c.tree, 0, out);
	text = describe(out, inos);
	ASSERT_EQ_STR(text, "entry icons/t/16x16/c.png, entry "
			    "icons/t/index.theme, entry icons/t/16x16/a.png");
	tree_inval_clear(out);
	/* evictions only ask the kernel to forget: the nodes stay until it
	 * does */
	ASSERT_EQ_INT(tree_node_get(c.tree, ino, NULL, &st), 0);
	tree_fixture_teardown(&c);
}

static bool readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

TEST(pressure)
{
	struct tree_fixture c = { 0 };
	g_autoptr(GHashTable) inos = names_of_inos();
	g_autoptr(GArray) out =
		g_array_new(FALSE, FALSE, sizeof(struct tree_inval));
	unsigned nodes, negatives;
	size_t bytes;

	ASSERT_EQ_INT(tree_fixture_setup(&c, NULL), 0);
	ASSERT_TRUE(tree_pressure_fd(c.tree) >= 0);
	ASSERT_EQ_INT(walk_named(&c, "icons/t/16x16/a.png", inos), 0);
	/* far below TREE_NODES_BYTES: quiet */
	ASSERT_TRUE(!readable(tree_pressure_fd(c.tree)));
	tree_held(c.tree, &nodes, &negatives, &bytes);
	/* the bound of the last eviction, exactly held: quiet */
	tree_collect_evictions(c.tree, bytes, out);
	ASSERT_EQ_INT(out->len, 0);
	ASSERT_EQ_INT(walk_named(&c, "icons/t/16x16/a.png", inos), 0);
	ASSERT_TRUE(!readable(tree_pressure_fd(c.tree)));
	/* a new node past it by more than TREE_SLACK: the evictor is woken,
	 * once, until it runs */
	ASSERT_EQ_INT(walk_named(&c, "icons/t/16x16/c.png", inos), 0);
	ASSERT_TRUE(readable(tree_pressure_fd(c.tree)));
	ASSERT_EQ_INT(walk_named(&c, "icons/t/index.theme", inos), 0);
	tree_collect_evictions(c.tree, bytes, out);
	ASSERT_TRUE(out->len > 0);
	ASSERT_TRUE(!readable(tree_pressure_fd(c.tree)));
	tree_inval_clear(out);
	tree_fixture_teardown(&c);
}

TEST(index_change)
{
	struct tree_fixture c = { 0 };
	g_autoptr(GHashTable) inos = names_of_inos();
	g_autoptr(GHashTable) names = g_hash_table_new(g_str_hash, g_str_equal);
	g_autoptr(GArray) out =
		g_array_new(FALSE, FALSE, sizeof(struct tree_inval));
	g_autofree char *text = NULL, *all = NULL;
	struct timespec when = { .tv_sec = 1234 };

	ASSERT_EQ_INT(tree_fixture_setup(&c, NULL), 0);
	ASSERT_EQ_INT(walk_named(&c, "icons/t/16x16/a.png", inos), 0);
	ASSERT_EQ_INT(walk_named(&c, "icons/t/16x16/c.png", inos), 0);
	ASSERT_EQ_INT(walk_named(&c, "icons/t/scalable/a.svg", inos), 0);
	ASSERT_EQ_INT(walk_named(&c, "icons/t/16x16/new.png", inos), -ENOENT);
	ASSERT_EQ_INT(walk_named(&c, "icons/t/16x16/other.png", inos), -ENOENT);
	g_hash_table_add(names, "a");
	g_hash_table_add(names, "new");
	tree_collect_invalidations(c.tree, names, false, when, out);
	/* every directory's inode; a's files, inode and entry; the miss
	 * named "new"; the root. Not c, not the other miss. */
	text = describe(out, inos);
	ASSERT_TRUE(strstr(text, "entry icons/t/16x16/a.png") != NULL);
	ASSERT_TRUE(strstr(text, "ino icons/t/16x16/a.png") != NULL);
	ASSERT_TRUE(strstr(text, "entry icons/t/scalable/a.svg") != NULL);
	ASSERT_TRUE(strstr(text, "entry icons/t/16x16/new.png") != NULL);
	ASSERT_TRUE(strstr(text, "ino icons/t/16x16, ") != NULL);
	ASSERT_TRUE(strstr(text, "c.png") == NULL);
	ASSERT_TRUE(strstr(text, "other.png") == NULL);
	ASSERT_TRUE(g_str_has_suffix(text, ", ino ."));
	ASSERT_EQ_INT(tree_fixture_negatives(c.tree), 1);
	tree_inval_clear(out);
	/* all: every node's inode and entry, every miss */
	tree_collect_invalidations(c.tree, names, true, when, out);
	all = describe(out, inos);
	ASSERT_TRUE(strstr(all, "entry icons/t/16x16/c.png") != NULL);
	ASSERT_TRUE(strstr(all, "entry icons/t/16x16/other.png") != NULL);
	ASSERT_EQ_INT(tree_fixture_negatives(c.tree), 0);
	tree_inval_clear(out);
	tree_fixture_teardown(&c);
}

TEST_MAIN(TEST_CASE(default_theme_switch), TEST_CASE(evictions),
	  TEST_CASE(pressure), TEST_CASE(index_change))
