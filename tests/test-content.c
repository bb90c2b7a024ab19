/* Content resolution (content.h) with real render workers (this program
 * serves as the worker, as the iconfs binary does): a PNG of the asked
 * size is its own bytes, an SVG renders once and is then served from the
 * queue or the table, a rejected source is remembered, and nothing outside
 * the base directories is served. */
#include <errno.h>
#include <unistd.h>

#include "blob.h"
#include "content.h"
#include "fixture.h"
#include "render.h"
#include "test.h"

struct ctx {
	struct fixture *f;
	struct content *c;
	struct blob_reader *b;
};

static int setup(struct ctx *x)
{
	x->f = fixture_new();
	fixture_themes(x->f);
	fixture_write(x->f, "t/scalable/broken.svg", "<svg", -1);
	if (fixture_index(x->f) < 0 ||
	    blob_reader_new(x->f->db, NULL, &x->b) < 0)
		return -1;
	return content_new(x->f->db_path, NULL, x->f->bases, 1, 5000, 1 << 20,
			   &x->c);
}

static void teardown(struct ctx *x)
{
	content_free(x->c);
	blob_reader_free(x->b);
	fixture_free(x->f);
}

static char *path_of(struct ctx *x, const char *rel)
{
	return g_build_filename(x->f->base, rel, NULL);
}

TEST(native_and_rendered)
{
	struct ctx x = { 0 };
	struct icon_content ic = { 0 };
	g_autofree char *png = NULL, *svg = NULL;
	void *data = NULL;
	size_t len = 0;
	unsigned w, h;

	ASSERT_EQ_INT(setup(&x), 0);
	png = path_of(&x, "t/16/a.png");
	svg = path_of(&x, "t/scalable/a.svg");
	ASSERT_EQ_INT(
		content_resolve(x.c, x.b, png, ICON_EXT_PNG, 16, 0, &ic),
		0);
	ASSERT_EQ_INT(ic.native, 1);
	icon_content_clear(&ic);

	/* a request that may not render gets -EAGAIN, and nothing renders */
	ASSERT_EQ_INT(
		content_resolve(x.c, x.b, svg, ICON_EXT_SVG, 24, CONTENT_STORED_ONLY, &ic),
		-EAGAIN);
	ASSERT_EQ_INT(content_counters(x.c)->renders, 0);
	ASSERT_EQ_INT(
		content_resolve(x.c, x.b, svg, ICON_EXT_SVG, 24, 0, &ic),
		0);
	ASSERT_EQ_INT(ic.native, 0);
	ASSERT_EQ_INT(content_counters(x.c)->renders, 1);
	ASSERT_EQ_INT(content_load(x.c, x.b, &ic, false, &data, &len), 0);
	ASSERT_EQ_INT(len, ic.size);
	ASSERT_EQ_INT(raster_png_size(data, len, &w, &h), 0);
	ASSERT_TRUE(w == 24 && h == 24);
	free(data);
	icon_content_clear(&ic);
	/* stored by the writer: a blob hit, no second render */
	ASSERT_EQ_INT(content_sync(x.c, 5000), 0);
	ASSERT_EQ_INT(
		content_resolve(x.c, x.b, svg, ICON_EXT_SVG, 24, 0, &ic),
		0);
	ASSERT_EQ_INT(content_counters(x.c)->renders, 1);
	ASSERT_TRUE(content_counters(x.c)->blob_hits >= 1);
	icon_content_clear(&ic);
	teardown(&x);
}

TEST(rejected_and_outside)
{
	struct ctx x = { 0 };
	struct icon_content ic = { 0 };
	g_autofree char *broken = NULL, *link = NULL, *up = NULL;
	g_autofree char *inside = NULL, *svg = NULL;
	_cleanup_free_ char *real = NULL;

	ASSERT_EQ_INT(setup(&x), 0);
	broken = path_of(&x, "t/scalable/broken.svg");
	ASSERT_EQ_INT(
		content_resolve(x.c, x.b, broken, ICON_EXT_SVG, 24, 0, &ic),
		-EIO);
	ASSERT_EQ_INT(content_sync(x.c, 5000), 0);
	ASSERT_EQ_INT(
		content_resolve(x.c, x.b, broken, ICON_EXT_SVG, 24, 0, &ic),
		-EIO);
	/* the verdict is remembered: one render for two requests */
	ASSERT_EQ_INT(content_counters(x.c)->render_failures, 1);

	link = path_of(&x, "t/16/passwd.png");
	ASSERT_EQ_INT(symlink("/etc/passwd", link), 0);
	ASSERT_EQ_INT(
		content_resolve(x.c, x.b, link, ICON_EXT_PNG, 0, 0, &ic),
		-ENOENT);
	ASSERT_EQ_INT(content_open_source(x.c, link), -ENOENT);
	/* a relative link out of the base directory likewise */
	up = path_of(&x, "t/16/up.png");
	ASSERT_EQ_INT(symlink("../../../../../../../../../etc/passwd", up), 0);
	ASSERT_EQ_INT(
		content_resolve(x.c, x.b, up, ICON_EXT_PNG, 0, 0, &ic),
		-ENOENT);
	/* one that stays inside is followed: its rendered key is the real
	 * file's */
	inside = path_of(&x, "t/16/inside.svg");
	svg = path_of(&x, "t/scalable/a.svg");
	real = realpath(svg, NULL);
	ASSERT_EQ_INT(symlink("../scalable/a.svg", inside), 0);
	ASSERT_EQ_INT(
		content_resolve(x.c, x.b, inside, ICON_EXT_SVG, 24, 0, &ic),
		0);
	ASSERT_EQ_STR(ic.stored.source, real);
	icon_content_clear(&ic);
	/* and opened as it is: the bytes of the file it leads to */
	{
		_cleanup_close_ int fd = content_open_source(x.c, inside);
		char head[5] = { 0 };

		ASSERT_TRUE(fd >= 0);
		ASSERT_EQ_INT(pread(fd, head, 4, 0), 4);
		ASSERT_EQ_STR(head, "<svg");
	}
	teardown(&x);
}

int main(void)
{
	TEST_CASES(cases, TEST_CASE(native_and_rendered),
		   TEST_CASE(rejected_and_outside));
	return test_run(cases, ELEMENTSOF(cases));
}
