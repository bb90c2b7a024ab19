/* Rasterizing: exact pixel sizes for square, wide and tall SVGs and for
 * PNGs of another size; centering with transparent padding; bad input;
 * GTK's symbolic encoding. */
#include <errno.h>
#include <png.h>

#include "raster.h"
#include "test.h"

/* Decode a PNG and return the RGBA pixels (malloc) and size. */
static unsigned char *decode(const void *data, size_t len, unsigned *w,
			     unsigned *h)
{
	png_image img = { .version = PNG_IMAGE_VERSION };
	unsigned char *px;

	if (!png_image_begin_read_from_memory(&img, data, len))
		return NULL;
	img.format = PNG_FORMAT_RGBA;
	px = malloc(PNG_IMAGE_SIZE(img));
	if (!px || !png_image_finish_read(&img, NULL, px, 0, NULL)) {
		free(px);
		return NULL;
	}
	*w = img.width;
	*h = img.height;
	return px;
}

static unsigned alpha_at(const unsigned char *px, unsigned w, unsigned x,
			 unsigned y)
{
	return px[(y * w + x) * 4 + 3];
}

static int render_svg(const char *svg, unsigned px, unsigned char **ret)
{
	void *png = NULL;
	size_t len;
	unsigned w, h;
	int r = raster_render(svg, strlen(svg), ICON_EXT_SVG, px, &png, &len);

	if (r < 0)
		return r;
	*ret = decode(png, len, &w, &h);
	free(png);
	return *ret && w == px && h == px ? 0 : -EINVAL;
}

TEST(square_svg)
{
	unsigned char *px = NULL;
	const char *svg = "<svg xmlns='http://www.w3.org/2000/svg' width='16' "
			  "height='16'><rect width='16' height='16' "
			  "fill='red'/></svg>";

	ASSERT_EQ_INT(render_svg(svg, 48, &px), 0);
	ASSERT_EQ_INT(alpha_at(px, 48, 0, 0), 255);
	ASSERT_EQ_INT(alpha_at(px, 48, 47, 47), 255);
	ASSERT_EQ_INT(px[0], 255); /* red, not premultiplied */
	free(px);
}

/* Pictures that are not square keep their aspect, centered, with
 * transparent padding: the alpha at a few points of each. */
TEST(aspect_kept)
{
	static const char wide[] =
		"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 200 100'>"
		"<rect width='200' height='100' fill='blue'/></svg>";
	static const char tall[] =
		"<svg xmlns='http://www.w3.org/2000/svg' width='10' "
		"height='40'>"
		"<rect width='10' height='40' fill='green'/></svg>";
	/* x, y, alpha: the wide one is 64x32 centered in 64 (rows 0-15 and
	 * 48-63 transparent), the tall one 10x40 in 40 */
	static const struct {
		const char *svg;
		unsigned px;
		unsigned points[4 * 3];
	} cases[] = {
		{ wide, 64, { 32, 2, 0, 32, 32, 255, 0, 32, 255, 32, 61, 0 } },
		{ tall, 40, { 2, 20, 0, 20, 20, 255, 37, 20, 0, 20, 0, 255 } },
	};

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		unsigned char *px = NULL;

		ASSERT_EQ_INT(render_svg(cases[i].svg, cases[i].px, &px), 0);
		for (size_t j = 0; j < 4; j++) {
			const unsigned *p = &cases[i].points[3 * j];
			int a = alpha_at(px, cases[i].px, p[0], p[1]);

			if (a != (int)p[2])
				free(px);
			ASSERT_EQ_INT(a, p[2]);
		}
		free(px);
	}
}

TEST(png_resample)
{
	unsigned char rgba[8 * 8 * 4];
	void *src = NULL, *out = NULL;
	size_t src_len, out_len;
	unsigned char *px;
	unsigned w, h;

	memset(rgba, 200, sizeof(rgba));
	ASSERT_EQ_INT(raster_encode_png(rgba, 8, 8, &src, &src_len), 0);
	ASSERT_EQ_INT(raster_png_size(src, src_len, &w, &h), 0);
	ASSERT_EQ_INT(w, 8);
	ASSERT_EQ_INT(
		raster_render(src, src_len, ICON_EXT_PNG, 24, &out, &out_len),
		0);
	px = decode(out, out_len, &w, &h);
	ASSERT_TRUE(px);
	ASSERT_EQ_INT(w, 24);
	ASSERT_EQ_INT(h, 24);
	ASSERT_EQ_INT(alpha_at(px, 24, 12, 12), 200);
	free(px);
	free(src);
	free(out);
}

TEST(bad_input)
{
	void *out = NULL;
	size_t len;

	ASSERT_EQ_INT(raster_render("not svg", 7, ICON_EXT_SVG, 16, &out, &len),
		      -EINVAL);
	ASSERT_EQ_INT(raster_render("", 0, ICON_EXT_SVG, 16, &out, &len),
		      -EINVAL);
	ASSERT_EQ_INT(
		raster_render("\x89PNG\r\n", 6, ICON_EXT_PNG, 16, &out, &len),
		-EINVAL);
	ASSERT_EQ_INT(raster_render("<svg xmlns='http://www.w3.org/2000/svg' "
				    "width='1'",
				    40, ICON_EXT_SVG, 16, &out, &len),
		      -EINVAL);
	ASSERT_EQ_INT(raster_render("x", 1, ICON_EXT_SVG, 0, &out, &len),
		      -EINVAL);
}

TEST(refused_svgs)
{
	static const char *const bad[] = {
		"<svg xmlns='http://www.w3.org/2000/svg' width='9' height='9'>"
		"<image href='/etc/passwd' width='9' height='9'/></svg>",
		"<svg xmlns='http://www.w3.org/2000/svg' "
		"xmlns:xlink='http://www.w3.org/1999/xlink' width='9' "
		"height='9'><use xlink:href = \"other.svg#x\"/></svg>",
		"<svg xmlns='http://www.w3.org/2000/svg' "
		"xmlns:xi='http://www.w3.org/2001/XInclude'><xi:include "
		"href='#a'/></svg>",
		"<svg xmlns='http://www.w3.org/2000/svg' width='100000' "
		"height='10'/>",
	};
	const char *ok = "<svg xmlns='http://www.w3.org/2000/svg' width='9' "
			 "height='9'><defs><rect id='r' width='9' "
			 "height='9'/></defs><use href='#r'/><image "
			 "href='data:image/png;base64,' width='1' "
			 "height='1'/></svg>";
	void *out = NULL;
	size_t len;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ASSERT_EQ_INT(raster_render(bad[i], strlen(bad[i]),
					    ICON_EXT_SVG, 16, &out, &len),
			      -EINVAL);
	ASSERT_EQ_INT(
		raster_render(ok, strlen(ok), ICON_EXT_SVG, 16, &out, &len), 0);
	free(out);
}

/* GTK's symbolic encoding: alpha the icon's, red, green and blue the
 * shares of its success, warning and error parts, 0 for the foreground
 * whatever its own colour; SVG only; an SVG that includes another file is
 * refused as it is for a picture. */
TEST(symbolic)
{
	/* four 4x16 columns: foreground (its own colour ignored), success,
	 * warning, error (an ellipse is not repainted: its own red stays) */
	static const char svg[] =
		"<svg xmlns='http://www.w3.org/2000/svg' width='16' height='16'>"
		"<rect width='4' height='16' fill='#123456'/>"
		"<rect x='4' width='4' height='16' class='success'/>"
		"<path d='M8 0h4v16h-4z' class='warning'/>"
		"<rect x='12' width='4' height='8' class='error' fill='blue'/>"
		"<ellipse cx='14' cy='12' rx='2' ry='4' fill='#ff0000'/></svg>";
	static const char include[] =
		"<svg xmlns='http://www.w3.org/2000/svg' "
		"xmlns:xi='http://www.w3.org/2001/XInclude'>"
		"<xi:include href='/etc/passwd'/></svg>";
	static const unsigned expect[][3] = { { 0, 0, 0 },
					      { 255, 0, 0 },
					      { 0, 255, 0 },
					      { 0, 0, 255 } };
	void *png = NULL;
	size_t len;
	unsigned w = 0, h = 0;
	unsigned char *px;

	ASSERT_EQ_INT(raster_render(svg, strlen(svg), ICON_EXT_SVG,
				    16 | RASTER_SYMBOLIC, &png, &len),
		      0);
	px = decode(png, len, &w, &h);
	free(png);
	ASSERT_TRUE(px != NULL);
	ASSERT_EQ_INT(w, 16);
	ASSERT_EQ_INT(h, 16);
	for (unsigned col = 0; col < 4; col++) {
		const unsigned char *p = px + (4 * (col * 4 + 1)) + 16 * 4 * 2;

		ASSERT_EQ_INT(p[0], expect[col][0]);
		ASSERT_EQ_INT(p[1], expect[col][1]);
		ASSERT_EQ_INT(p[2], expect[col][2]);
		ASSERT_EQ_INT(p[3], 255);
	}
	/* the ellipse keeps its own red in every drawing, as GTK's does */
	ASSERT_EQ_INT(px[(12 * 16 + 14) * 4], 255);
	ASSERT_EQ_INT(px[(12 * 16 + 14) * 4 + 1], 255);
	ASSERT_EQ_INT(px[(12 * 16 + 14) * 4 + 2], 255);
	free(px);

	ASSERT_EQ_INT(raster_render("\x89PNG\r\n", 6, ICON_EXT_PNG,
				    16 | RASTER_SYMBOLIC, &png, &len),
		      -EINVAL);
	ASSERT_EQ_INT(raster_render(include, strlen(include), ICON_EXT_SVG,
				    16 | RASTER_SYMBOLIC, &png, &len),
		      -EINVAL);
	ASSERT_EQ_INT(raster_render(svg, strlen(svg), ICON_EXT_SVG,
				    RASTER_SYMBOLIC, &png, &len),
		      -EINVAL);
}

TEST_MAIN(TEST_CASE(square_svg), TEST_CASE(refused_svgs),
	  TEST_CASE(aspect_kept), TEST_CASE(png_resample), TEST_CASE(bad_input),
	  TEST_CASE(symbolic))
