/* The tree's nodes (tree.h): what a name in a directory is, inode numbers
 * that listings and lookups agree on, one name per directory, reference
 * counts, tracked misses and invalidations bounded by what the kernel
 * holds. Icons here are PNGs of the asked size (no render), but for the
 * deferred render of a lookup and the pre-encoded symbolic PNGs. */
#include <errno.h>

#include "test.h"
#include "tree-fixture.h"

TEST(names)
{
	struct tree_fixture c = { 0 };
	struct stat st;
	double timeout = 0;
	uint64_t ino;

	ASSERT_EQ_INT(tree_fixture_setup(&c, NULL), 0);
	ASSERT_EQ_INT(tree_fixture_walk(&c, "icons/t/16x16/a.png", &ino, &st,
					&timeout),
		      0);
	ASSERT_TRUE(S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0444);
	ASSERT_TRUE(st.st_size > 0);
	ASSERT_EQ_INT(st.st_ino, ino);
	ASSERT_EQ_INT(tree_fixture_walk(&c, "48/c.png", &ino, &st, &timeout),
		      0);
	ASSERT_EQ_INT(tree_fixture_walk(&c, "icons/t/scalable/b-symbolic.svg",
					&ino, &st, &timeout),
		      0);
	/* symbolic icons only as SVG under icons/ */
	ASSERT_EQ_INT(tree_fixture_walk(&c, "icons/t/16x16/b-symbolic.png",
					&ino, &st, &timeout),
		      -ENOENT);
	ASSERT_EQ_INT(timeout, TREE_TIMEOUT);
	/* one name per directory */
	ASSERT_EQ_INT(tree_fixture_walk(&c, "48@1", &ino, &st, &timeout),
		      -ENOENT);
	ASSERT_EQ_INT(
		tree_fixture_walk(&c, "icons/t/16x16@1", &ino, &st, &timeout),
		-ENOENT);
	ASSERT_EQ_INT(tree_fixture_walk(&c, "icons/nope", &ino, &st, &timeout),
		      -ENOENT);
	ASSERT_EQ_INT(tree_fixture_negatives(c.tree), 4);
	ASSERT_EQ_INT(tree_fixture_walk(&c, "icons/t/index.theme", &ino, &st,
					&timeout),
		      0);
	ASSERT_TRUE(st.st_size > 100);
	tree_fixture_teardown(&c);
}

TEST(inos_and_forget)
{
	struct tree_fixture c = { 0 };
	g_autoptr(GPtrArray) names = g_ptr_array_new();
	g_autoptr(GArray) inos = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	struct tree_node dir = { 0 };
	struct stat st;
	double timeout;
	uint64_t dir_ino, a_ino;
	unsigned before;

	ASSERT_EQ_INT(tree_fixture_setup(&c, NULL), 0);
	ASSERT_EQ_INT(
		tree_fixture_walk(&c, "icons/t/16x16", &dir_ino, &st, &timeout),
		0);
	ASSERT_EQ_INT(tree_node_get(c.tree, dir_ino, &dir, NULL), 0);
	g_ptr_array_add(names, ".");
	g_ptr_array_add(names, "..");
	g_ptr_array_add(names, "a.png");
	g_ptr_array_add(names, "c.png");
	tree_number(c.tree, &dir, names, NULL, inos);
	ASSERT_EQ_INT(g_array_index(inos, uint64_t, 0), dir_ino);
	/* an icon view's list of names numbers them the same */
	{
		g_autoptr(GPtrArray) dots = g_ptr_array_new();
		g_autoptr(GPtrArray) icons = g_ptr_array_new();
		g_autoptr(GArray) same =
			g_array_new(FALSE, FALSE, sizeof(uint64_t));

		g_ptr_array_add(dots, ".");
		g_ptr_array_add(dots, "..");
		g_ptr_array_add(icons, "a");
		g_ptr_array_add(icons, "c");
		tree_number(c.tree, &dir, dots, icons, same);
		ASSERT_EQ_INT(same->len, 4);
		for (unsigned i = 0; i < 4; i++)
			ASSERT_EQ_INT(g_array_index(same, uint64_t, i),
				      g_array_index(inos, uint64_t, i));
	}
	/* numbered before it is looked up, the same after */
	before = tree_fixture_nodes(c.tree);
	ASSERT_EQ_INT(tree_lookup(c.tree, &c.x, REQUEST_RENDER, dir_ino,
				  "a.png", &a_ino, &st, &timeout),
		      0);
	ASSERT_EQ_INT(g_array_index(inos, uint64_t, 2), a_ino);
	ASSERT_EQ_INT(tree_fixture_nodes(c.tree), before + 1);
	ASSERT_EQ_INT(tree_node_get(c.tree, a_ino, NULL, &st), 0);
	tree_forget(c.tree, a_ino, 1);
	ASSERT_EQ_INT(tree_fixture_nodes(c.tree), before);
	ASSERT_EQ_INT(tree_node_get(c.tree, a_ino, NULL, &st), -ESTALE);
	tree_node_clear(&dir);
	tree_fixture_teardown(&c);
}

TEST(invalidations)
{
	struct tree_fixture c = { 0 };
	g_autoptr(GHashTable) names = g_hash_table_new(g_str_hash, g_str_equal);
	g_autoptr(GArray) out =
		g_array_new(FALSE, FALSE, sizeof(struct tree_inval));
	struct timespec now = { 0 };
	struct stat st;
	double timeout;
	uint64_t ino;
	bool a_entry = false;

	ASSERT_EQ_INT(tree_fixture_setup(&c, NULL), 0);
	ASSERT_EQ_INT(tree_fixture_walk(&c, "icons/t/16x16/a.png", &ino, &st,
					&timeout),
		      0);
	ASSERT_EQ_INT(tree_fixture_walk(&c, "icons/t/16x16/gone.png", &ino, &st,
					&timeout),
		      -ENOENT);
	ASSERT_EQ_INT(tree_fixture_walk(&c, "icons/t/16x16/other.png", &ino,
					&st, &timeout),
		      -ENOENT);
	g_hash_table_add(names, "a");
	g_hash_table_add(names, "gone");
	tree_collect_invalidations(c.tree, names, false, now, out);
	for (unsigned i = 0; i < out->len; i++) {
		struct tree_inval *v =
			&g_array_index(out, struct tree_inval, i);
		a_entry |= v->name && streq(v->name, "a.png");
	}
	ASSERT_TRUE(a_entry);
	/* the named miss went, the other is still held */
	ASSERT_EQ_INT(tree_fixture_negatives(c.tree), 1);
	/* icons, t and 16x16 an inode each, a.png its inode and entry, the
	 * named miss its entry, and the root */
	ASSERT_EQ_INT(out->len, 3 + 2 + 1 + 1);
	/* the generation is the watcher's to bump, not the tree's */
	ASSERT_EQ_INT(generation_now(&c.gen), 0);
	tree_inval_clear(out);
	tree_collect_invalidations(c.tree, names, true, now, out);
	ASSERT_EQ_INT(tree_fixture_negatives(c.tree), 0);
	tree_inval_clear(out);
	tree_fixture_teardown(&c);
}

/* A lookup that would render (REQUEST_DEFER, as a LOOKUP asks) renders
 * nothing and gives provisional attributes; the node is rendered when it
 * is settled, at its exact size, which the next lookup finds as it is. */
TEST(deferred)
{
	struct tree_fixture c = { 0 };
	struct content_counters *k;
	struct stat st;
	double timeout = 0;
	uint64_t dir, ino, again;
	unsigned long long renders;
	off_t size;

	ASSERT_EQ_INT(tree_fixture_setup(&c, NULL), 0);
	k = content_counters(c.content);
	ASSERT_EQ_INT(tree_fixture_walk(&c, "icons/t/48x48", &dir, &st,
					&timeout),
		      0);
	renders = atomic_load(&k->renders);
	/* a.svg at 48 px: a render */
	ASSERT_EQ_INT(tree_lookup(c.tree, &c.x, REQUEST_DEFER, dir, "a.png",
				  &ino, &st, &timeout),
		      1);
	ASSERT_EQ_INT(st.st_size, 0);
	ASSERT_EQ_INT(atomic_load(&k->renders), renders);
	ASSERT_EQ_INT(tree_node_settle(c.tree, &c.x, REQUEST_STORED_ONLY, ino,
				       NULL, &st),
		      -EAGAIN);
	ASSERT_EQ_INT(tree_node_settle(c.tree, &c.x, REQUEST_RENDER, ino, NULL,
				       &st),
		      0);
	size = st.st_size;
	ASSERT_TRUE(size > 100);
	ASSERT_EQ_INT(atomic_load(&k->renders), renders + 1);
	ASSERT_EQ_INT(tree_lookup(c.tree, &c.x, REQUEST_DEFER, dir, "a.png",
				  &again, &st, &timeout),
		      0);
	ASSERT_EQ_INT(again, ino);
	ASSERT_EQ_INT(st.st_size, size);
	ASSERT_EQ_INT(tree_node_settle(c.tree, &c.x, REQUEST_RENDER, ino, NULL,
				       &st),
		      0);
	ASSERT_EQ_INT(st.st_size, size);
	ASSERT_EQ_INT(atomic_load(&k->renders), renders + 1);
	/* the source's own bytes are never provisional */
	ASSERT_EQ_INT(tree_fixture_walk(&c, "icons/t/16x16", &dir, &st,
					&timeout),
		      0);
	ASSERT_EQ_INT(tree_lookup(c.tree, &c.x, REQUEST_DEFER, dir, "a.png",
				  &ino, &st, &timeout),
		      0);
	ASSERT_TRUE(st.st_size > 0);
	tree_fixture_teardown(&c);
}

/* The bytes of file `path`, resolved and rendered (malloc()ed). */
static void *file_bytes(struct tree_fixture *c, const char *path,
			size_t *ret_len, unsigned *ret_px)
{
	struct tree_node n = { 0 };
	struct stat st;
	double timeout;
	uint64_t ino;
	void *data = NULL;

	if (tree_fixture_walk(c, path, &ino, &st, &timeout) < 0 ||
	    tree_node_get(c->tree, ino, &n, NULL) < 0)
		return NULL;
	*ret_px = n.content.px;
	if (content_load(c->content, c->x.blobs, &n.content, false, &data,
			 ret_len) < 0 ||
	    *ret_len != (size_t)st.st_size)
		data = NULL;
	tree_node_clear(&n);
	return data;
}

/* Under gtk, a symbolic SVG is also GTK's pre-encoded NAME.symbolic.png in
 * a size view at scale 1 (rendered like a deferred lookup of any other
 * name), another render than the flat view's picture of the same size. */
TEST(symbolic_encoded)
{
	struct tree_fixture c = { 0 };
	struct content_counters *k;
	struct stat st;
	double timeout = 0;
	uint64_t dir, ino;
	unsigned long long renders;
	_cleanup_free_ void *enc = NULL, *pic = NULL;
	size_t enc_len = 0, pic_len = 0;
	unsigned enc_px = 0, pic_px = 0;

	ASSERT_EQ_INT(tree_fixture_setup(&c, NULL), 0);
	k = content_counters(c.content);
	ASSERT_EQ_INT(tree_fixture_walk(&c, "icons/t/16x16", &dir, &st,
					&timeout),
		      0);
	renders = atomic_load(&k->renders);
	ASSERT_EQ_INT(tree_lookup(c.tree, &c.x, REQUEST_DEFER, dir,
				  "b-symbolic.symbolic.png", &ino, &st,
				  &timeout),
		      1);
	ASSERT_EQ_INT(tree_node_settle(c.tree, &c.x, REQUEST_RENDER, ino, NULL,
				       &st),
		      0);
	ASSERT_TRUE(st.st_size > 60);
	ASSERT_EQ_INT(atomic_load(&k->renders), renders + 1);
	enc = file_bytes(&c, "icons/t/16x16/b-symbolic.symbolic.png", &enc_len,
			 &enc_px);
	ASSERT_TRUE(enc != NULL);
	ASSERT_EQ_INT(enc_px, 16 | RASTER_SYMBOLIC);
	pic = file_bytes(&c, "16/b-symbolic.png", &pic_len, &pic_px);
	ASSERT_TRUE(pic != NULL);
	ASSERT_EQ_INT(pic_px, 16);
	ASSERT_TRUE(enc_len != pic_len || memcmp(enc, pic, enc_len) != 0);
	ASSERT_EQ_INT(atomic_load(&k->renders), renders + 2);
	/* named, any size view of scale 1 has it; never at scale 2, nor for
	 * a name that is not symbolic */
	ASSERT_EQ_INT(tree_fixture_walk(&c, "icons/t/22x22/b-symbolic.symbolic.png",
					&ino, &st, &timeout),
		      0);
	ASSERT_EQ_INT(tree_fixture_walk(&c, "icons/t/16x16@2/b-symbolic.symbolic.png",
					&ino, &st, &timeout),
		      -ENOENT);
	ASSERT_EQ_INT(tree_fixture_walk(&c, "icons/t/16x16/a.symbolic.png",
					&ino, &st, &timeout),
		      -ENOENT);
	tree_fixture_teardown(&c);
}

static void bitmap_symbolic(struct fixture *f)
{
	fixture_png(f, "parent/48/c-symbolic.png", 48);
}

/* A symbolic name whose source is a bitmap has no encoding. */
TEST(symbolic_bitmap)
{
	struct tree_fixture c = { 0 };
	struct stat st;
	double timeout = 0;
	uint64_t ino;

	ASSERT_EQ_INT(tree_fixture_setup(&c, bitmap_symbolic), 0);
	ASSERT_EQ_INT(tree_fixture_walk(&c, "48/c-symbolic.png", &ino, &st,
					&timeout),
		      0);
	ASSERT_EQ_INT(tree_fixture_walk(&c, "icons/t/48x48/c-symbolic.symbolic.png",
					&ino, &st, &timeout),
		      -ENOENT);
	tree_fixture_teardown(&c);
}

TEST_MAIN(TEST_CASE(names), TEST_CASE(inos_and_forget),
	  TEST_CASE(invalidations), TEST_CASE(deferred),
	  TEST_CASE(symbolic_encoded), TEST_CASE(symbolic_bitmap))
