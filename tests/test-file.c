/* Open files (file.h): a source served as its own bytes is read from the
 * file itself, a rendered PNG and the synthesized index.theme and
 * icon-theme.cache from memory, each as long as its lookup said, read
 * whole or in pieces at any offset; directories and forgotten nodes do not
 * open. */
#include <errno.h>

#include "file.h"
#include "raster.h"
#include "test.h"
#include "tree-fixture.h"

/* The whole file at `path` by file_read() in pieces of `chunk` bytes
 * (g_free); its length in *ret_len, and the length its lookup gave in
 * *ret_st_size. NULL when it does not open or a read fails. */
static char *read_all(struct tree_fixture *c, const char *path, size_t chunk,
		      size_t *ret_len, off_t *ret_st_size)
{
	GByteArray *out = g_byte_array_new();
	struct file *f = NULL;
	struct stat st;
	double timeout;
	uint64_t ino;
	char buf[4096];
	ssize_t n;

	if (tree_fixture_walk(c, path, &ino, &st, &timeout) < 0 ||
	    file_open(c->tree, &c->x, REQUEST_RENDER, ino, &f) < 0) {
		g_byte_array_unref(out);
		return NULL;
	}
	while ((n = file_read(f, buf, chunk, (off_t)out->len)) > 0)
		g_byte_array_append(out, (const guint8 *)buf, (guint)n);
	file_free(f);
	*ret_len = out->len;
	*ret_st_size = st.st_size;
	if (n < 0) {
		g_byte_array_unref(out);
		return NULL;
	}
	return (char *)g_byte_array_free(out, FALSE);
}

TEST(source_bytes)
{
	struct tree_fixture c = { 0 };
	g_autofree char *data = NULL, *want = NULL, *src = NULL;
	size_t len = 0, want_len = 0;
	off_t st_size = 0;

	ASSERT_EQ_INT(tree_fixture_setup(&c, NULL), 0);
	/* a 16 px PNG in a 16 px view, and an SVG in scalable/: the sources
	 * themselves */
	src = g_build_filename(c.f->base, "t", "16", "a.png", NULL);
	ASSERT_TRUE(g_file_get_contents(src, &want, &want_len, NULL));
	data = read_all(&c, "icons/t/16x16/a.png", 7, &len, &st_size);
	ASSERT_TRUE(data != NULL);
	ASSERT_EQ_INT(len, want_len);
	ASSERT_EQ_INT(st_size, want_len);
	ASSERT_TRUE(memcmp(data, want, len) == 0);
	g_free(data);
	data = read_all(&c, "icons/t/scalable/a.svg", 4096, &len, &st_size);
	ASSERT_TRUE(data != NULL);
	ASSERT_EQ_INT(len, strlen(fixture_svg()));
	ASSERT_EQ_INT(st_size, len);
	ASSERT_TRUE(memcmp(data, fixture_svg(), len) == 0);
	tree_fixture_teardown(&c);
}

TEST(rendered)
{
	struct tree_fixture c = { 0 };
	g_autofree char *data = NULL, *again = NULL;
	size_t len = 0, len2 = 0;
	off_t st_size = 0;
	unsigned w = 0, h = 0;

	ASSERT_EQ_INT(tree_fixture_setup(&c, NULL), 0);
	/* h is 64 px in hicolor alone: rendered down to 16 */
	data = read_all(&c, "icons/t/16x16/h.png", 4096, &len, &st_size);
	ASSERT_TRUE(data != NULL);
	ASSERT_EQ_INT(st_size, len);
	ASSERT_EQ_INT(raster_png_size(data, len, &w, &h), 0);
	ASSERT_EQ_INT(w, 16);
	ASSERT_EQ_INT(h, 16);
	/* in pieces of 5 bytes: the same bytes */
	again = read_all(&c, "icons/t/16x16/h.png", 5, &len2, &st_size);
	ASSERT_TRUE(again != NULL);
	ASSERT_EQ_INT(len2, len);
	ASSERT_TRUE(memcmp(data, again, len) == 0);
	tree_fixture_teardown(&c);
}

TEST(synthesized)
{
	struct tree_fixture c = { 0 };
	g_autofree char *theme = NULL, *cache = NULL;
	size_t len = 0;
	off_t st_size = 0;

	ASSERT_EQ_INT(tree_fixture_setup(&c, NULL), 0);
	theme = read_all(&c, "icons/t/index.theme", 100, &len, &st_size);
	ASSERT_TRUE(theme != NULL);
	ASSERT_EQ_INT(st_size, len);
	ASSERT_TRUE(len > 13 && memcmp(theme, "[Icon Theme]\n", 13) == 0);
	/* GTK's cache: major version 1, minor 0, big-endian */
	cache = read_all(&c, "icons/t/icon-theme.cache", 100, &len, &st_size);
	ASSERT_TRUE(cache != NULL);
	ASSERT_EQ_INT(st_size, len);
	ASSERT_TRUE(len > 12 && memcmp(cache, "\0\1\0\0", 4) == 0);
	tree_fixture_teardown(&c);
}

TEST(offsets)
{
	struct tree_fixture c = { 0 };
	struct file *f = NULL, *mem = NULL;
	struct stat st;
	double timeout;
	uint64_t ino, theme;
	char buf[64], whole[64];

	ASSERT_EQ_INT(tree_fixture_setup(&c, NULL), 0);
	ASSERT_EQ_INT(tree_fixture_walk(&c, "icons/t/scalable/a.svg", &ino, &st,
					&timeout),
		      0);
	ASSERT_EQ_INT(file_open(c.tree, &c.x, REQUEST_RENDER, ino, &f), 0);
	ASSERT_EQ_INT(file_read(f, buf, 5, 1), 5);
	ASSERT_TRUE(memcmp(buf, fixture_svg() + 1, 5) == 0);
	/* past the end, and at the end, nothing; before the start, EINVAL */
	ASSERT_EQ_INT(file_read(f, buf, 10, st.st_size - 3), 3);
	ASSERT_EQ_INT(file_read(f, buf, 10, st.st_size), 0);
	ASSERT_EQ_INT(file_read(f, buf, 10, -1), -EINVAL);
	file_free(f);
	/* the same for bytes in memory */
	ASSERT_EQ_INT(tree_fixture_walk(&c, "icons/t/index.theme", &theme, &st,
					&timeout),
		      0);
	ASSERT_EQ_INT(file_open(c.tree, &c.x, REQUEST_RENDER, theme, &mem), 0);
	ASSERT_EQ_INT(file_read(mem, whole, 20, 0), 20);
	ASSERT_EQ_INT(file_read(mem, buf, 6, 7), 6);
	ASSERT_TRUE(memcmp(buf, whole + 7, 6) == 0);
	ASSERT_EQ_INT(file_read(mem, buf, 10, st.st_size - 3), 3);
	ASSERT_EQ_INT(file_read(mem, buf, 10, st.st_size), 0);
	ASSERT_EQ_INT(file_read(mem, buf, 10, st.st_size + 100), 0);
	ASSERT_EQ_INT(file_read(mem, buf, 10, -1), -EINVAL);
	file_free(mem);
	/* open, read and close in one */
	ASSERT_EQ_INT(
		file_pread(c.tree, &c.x, REQUEST_RENDER, theme, buf, 6, 7), 6);
	ASSERT_TRUE(memcmp(buf, whole + 7, 6) == 0);
	tree_fixture_teardown(&c);
}

TEST(does_not_open)
{
	struct tree_fixture c = { 0 };
	struct file *f = NULL;
	struct stat st;
	double timeout;
	uint64_t ino;
	char buf[8];

	ASSERT_EQ_INT(tree_fixture_setup(&c, NULL), 0);
	ASSERT_EQ_INT(
		file_open(c.tree, &c.x, REQUEST_RENDER, TREE_ROOT_INO, &f),
		-EISDIR);
	ASSERT_EQ_INT(
		tree_fixture_walk(&c, "icons/t/16x16", &ino, &st, &timeout), 0);
	ASSERT_EQ_INT(file_open(c.tree, &c.x, REQUEST_RENDER, ino, &f),
		      -EISDIR);
	ASSERT_EQ_INT(file_open(c.tree, &c.x, REQUEST_RENDER, 12345, &f),
		      -ESTALE);
	ASSERT_EQ_INT(
		file_pread(c.tree, &c.x, REQUEST_RENDER, 12345, buf, 8, 0),
		-ESTALE);
	ASSERT_TRUE(f == NULL);
	tree_fixture_teardown(&c);
}

TEST_MAIN(TEST_CASE(source_bytes), TEST_CASE(rendered), TEST_CASE(synthesized),
	  TEST_CASE(offsets), TEST_CASE(does_not_open))
