/* SVG/PNG/XPM → exact-size PNG; see raster.h. */
#include <errno.h>
#include <gdk-pixbuf/gdk-pixbuf.h>
#include <librsvg/rsvg.h>
#include <png.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "macro.h"
#include "raster.h"

struct membuf {
	uint8_t *data;
	size_t len, cap;
	int failed;
};

static void membuf_write(png_structp png, png_bytep data, png_size_t len)
{
	struct membuf *b = png_get_io_ptr(png);

	if (b->failed)
		return;
	if (b->len + len > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 4096;
		uint8_t *n;

		while (cap < b->len + len)
			cap *= 2;
		n = realloc(b->data, cap);
		if (!n) {
			b->failed = 1;
			return;
		}
		b->data = n;
		b->cap = cap;
	}
	memcpy(b->data + b->len, data, len);
	b->len += len;
}

static void membuf_flush(png_structp png)
{
	(void)png;
}

int raster_encode_png(const uint8_t *rgba, unsigned width, unsigned height,
		      void **ret_png, size_t *ret_len)
{
	struct membuf b = { 0 };
	png_structp png;
	png_infop info;

	png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
	if (!png)
		return -ENOMEM;
	info = png_create_info_struct(png);
	if (!info || setjmp(png_jmpbuf(png))) {
		png_destroy_write_struct(&png, &info);
		free(b.data);
		return -ENOMEM;
	}
	png_set_write_fn(png, &b, membuf_write, membuf_flush);
	/* Measured at 256 px: zlib level 1 with the SUB filter costs a
	 * fraction of the defaults for files ~15% larger. */
	png_set_compression_level(png, 1);
	png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_SUB);
	png_set_IHDR(png, info, width, height, 8, PNG_COLOR_TYPE_RGB_ALPHA,
		     PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
		     PNG_FILTER_TYPE_DEFAULT);
	png_write_info(png, info);
	for (unsigned y = 0; y < height; y++)
		png_write_row(png,
			      (png_const_bytep)(rgba + (size_t)y * width * 4));
	png_write_end(png, info);
	png_destroy_write_struct(&png, &info);
	if (b.failed) {
		free(b.data);
		return -ENOMEM;
	}
	*ret_png = b.data;
	*ret_len = b.len;
	return 0;
}

/* Fit w×h into px×px keeping the aspect ratio. */
static void fit(double w, double h, unsigned px, double *ret_x, double *ret_y,
		double *ret_w, double *ret_h)
{
	double s = px / (w > h ? w : h);

	*ret_w = w * s;
	*ret_h = h * s;
	*ret_x = (px - *ret_w) / 2;
	*ret_y = (px - *ret_h) / 2;
}

/* Cairo's premultiplied native-endian ARGB32 → straight RGBA bytes. */
static void unpremultiply(const uint8_t *src, int stride, unsigned px,
			  uint8_t *dst)
{
	for (unsigned y = 0; y < px; y++) {
		const uint32_t *row =
			(const uint32_t *)(src + (size_t)y * stride);
		for (unsigned x = 0; x < px; x++) {
			uint32_t v = row[x];
			unsigned a = v >> 24, r = (v >> 16) & 0xff,
				 g = (v >> 8) & 0xff, b = v & 0xff;
			uint8_t *o = dst + ((size_t)y * px + x) * 4;

			if (a != 0 && a != 255) {
				r = (r * 255 + a / 2) / a;
				g = (g * 255 + a / 2) / a;
				b = (b * 255 + a / 2) / a;
			}
			o[0] = r > 255 ? 255 : r;
			o[1] = g > 255 ? 255 : g;
			o[2] = b > 255 ? 255 : b;
			o[3] = a;
		}
	}
}

/* Icons are self-contained: an SVG that includes or links anything but its
 * own fragments and data: URLs is refused before librsvg sees it (librsvg
 * 2.54 aborts on a self-including XInclude). */
static bool svg_self_contained(const char *data, size_t len)
{
	static const char xinclude[] = "XInclude";
	const char *p = data, *end = data + len;

	if (memmem(data, len, xinclude, sizeof(xinclude) - 1))
		return false;
	while ((p = memmem(p, end - p, "href", 4))) {
		const char *v = p + 4;

		p = v;
		while (v < end &&
		       (*v == ' ' || *v == '\t' || *v == '\n' || *v == '\r'))
			v++;
		if (v >= end || *v != '=')
			continue;
		v++;
		while (v < end &&
		       (*v == ' ' || *v == '\t' || *v == '\n' || *v == '\r'))
			v++;
		if (v < end && (*v == '"' || *v == '\''))
			v++;
		if (v < end && *v == '#')
			continue;
		if (end - v >= 5 && memcmp(v, "data:", 5) == 0)
			continue;
		return false;
	}
	return true;
}

/* Parse an SVG: its handle (*ret, NULL on failure; unref it) and its size
 * in pixels, as gdk-pixbuf gives it: its intrinsic size, else its
 * viewBox's. */
static int svg_load(const void *data, size_t len, RsvgHandle **ret,
		    double *ret_w, double *ret_h)
{
	g_autoptr(GError) error = NULL;
	RsvgHandle *handle = rsvg_handle_new_from_data(data, len, &error);
	gdouble w = 0, h = 0;

	*ret = handle;
	if (!handle)
		return log_debug_errno(-EINVAL, "not a usable SVG: %s",
				       error->message);
	if (!rsvg_handle_get_intrinsic_size_in_pixels(handle, &w, &h) ||
	    w <= 0 || h <= 0) {
		gboolean has_w, has_h, has_vb;
		RsvgLength lw, lh;
		RsvgRectangle vb;

		rsvg_handle_get_intrinsic_dimensions(handle, &has_w, &lw,
						     &has_h, &lh, &has_vb, &vb);
		if (!has_vb || vb.width <= 0 || vb.height <= 0)
			return log_debug_errno(-EINVAL, "SVG has no size");
		w = vb.width;
		h = vb.height;
	}
	if (w > RASTER_CANVAS_MAX || h > RASTER_CANVAS_MAX)
		return log_debug_errno(-EINVAL, "SVG canvas %gx%g is too large",
				       w, h);
	*ret_w = w;
	*ret_h = h;
	return 0;
}

/* Draw an SVG already checked (svg_self_contained, or a wrapper of ours
 * around one) at px×px into straight RGBA. */
static int svg_draw(const void *data, size_t len, unsigned px, uint8_t *rgba)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GObject) obj = NULL;
	RsvgHandle *handle;
	cairo_surface_t *surface;
	cairo_t *cr;
	double w, h;
	RsvgRectangle viewport;
	gboolean ok;
	int r;

	r = svg_load(data, len, &handle, &w, &h);
	obj = (GObject *)handle;
	if (r < 0)
		return r;
	fit(w, h, px, &viewport.x, &viewport.y, &viewport.width,
	    &viewport.height);

	surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, px, px);
	if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) {
		cairo_surface_destroy(surface);
		return -ENOMEM;
	}
	cr = cairo_create(surface);
	ok = rsvg_handle_render_document(handle, cr, &viewport, &error);
	cairo_destroy(cr);
	cairo_surface_flush(surface);
	if (ok)
		unpremultiply(cairo_image_surface_get_data(surface),
			      cairo_image_surface_get_stride(surface), px,
			      rgba);
	cairo_surface_destroy(surface);
	if (!ok)
		return log_debug_errno(-EINVAL, "cannot render SVG: %s",
				       error->message);
	return 0;
}

static int raster_svg(const void *data, size_t len, unsigned px, uint8_t *rgba)
{
	if (!svg_self_contained(data, len))
		return log_debug_errno(-EINVAL, "SVG refers to other files");
	return svg_draw(data, len, px, rgba);
}

/* The symbolic encoding of an SVG (RASTER_SYMBOLIC), made as GTK makes it:
 * the icon included (as a data: URL) into a document of its own size whose
 * style sheet paints every rect, circle and path in one colour and one of
 * the classes "success", "warning" and "error" in another, drawn once for
 * each class; the first drawing's alpha is the icon's, and each drawing's
 * red channel is that class's share. */
static int raster_symbolic(const void *data, size_t len, unsigned px,
			   uint8_t *rgba)
{
	static const char *const classes[] = { "success", "warning", "error" };
	g_autoptr(GObject) obj = NULL;
	_cleanup_free_ uint8_t *plane = NULL;
	g_autofree char *b64 = NULL;
	RsvgHandle *handle;
	double w, h;
	int r;

	if (!svg_self_contained(data, len))
		return log_debug_errno(-EINVAL, "SVG refers to other files");
	r = svg_load(data, len, &handle, &w, &h);
	obj = (GObject *)handle;
	if (r < 0)
		return r;
	plane = calloc((size_t)px * px, 4);
	if (!plane)
		return -ENOMEM;
	b64 = g_base64_encode(data, len);
	for (unsigned c = 0; c < ELEMENTSOF(classes); c++) {
		g_autoptr(GString) doc = g_string_new(NULL);

		g_string_printf(
			doc,
			"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" "
			"xmlns:xi=\"http://www.w3.org/2001/XInclude\" "
			"width=\"%d\" height=\"%d\">\n"
			"<style type=\"text/css\">\n"
			"rect,circle,path { fill: rgb(0,255,0) !important; }\n",
			(int)(w + 0.5), (int)(h + 0.5));
		/* in GTK's order, which decides for a part of two classes */
		for (unsigned k = 1; k <= ELEMENTSOF(classes); k++) {
			unsigned i = k % ELEMENTSOF(classes);

			g_string_append_printf(
				doc, ".%s { fill: %s !important; }\n",
				classes[i],
				i == c ? "rgb(255,0,0)" : "rgb(0,255,0)");
		}
		g_string_append_printf(
			doc,
			"</style>\n"
			"<xi:include href=\"data:text/xml;base64,%s\"/>\n"
			"</svg>\n",
			b64);
		r = svg_draw(doc->str, doc->len, px, plane);
		if (r < 0)
			return r;
		for (size_t i = 0; i < (size_t)px * px; i++) {
			if (c == 0)
				rgba[i * 4 + 3] = plane[i * 4 + 3];
			rgba[i * 4 + c] = plane[i * 4];
		}
	}
	return 0;
}

static bool bitmap_magic_ok(const void *data, size_t len, enum icon_ext format)
{
	static const uint8_t png_sig[8] = { 0x89, 'P',	'N',  'G',
					    '\r', '\n', 0x1a, '\n' };
	static const char xpm_sig[] = "/* XPM */";
	const char *p = data, *end = p + len;

	if (format == ICON_EXT_PNG)
		return len >= 8 && memcmp(data, png_sig, 8) == 0;
	while (p < end && g_ascii_isspace(*p))
		p++;
	return format == ICON_EXT_XPM && (size_t)(end - p) >= strlen(xpm_sig) &&
	       memcmp(p, xpm_sig, strlen(xpm_sig)) == 0;
}

/* The quoted strings of an XPM file, in order: what
 * gdk_pixbuf_new_from_xpm_data() takes. (gdk-pixbuf's incremental XPM
 * loader goes through a temporary file, which a sandboxed worker cannot
 * create.) */
static char **xpm_lines(const char *data, size_t len)
{
	GPtrArray *lines = g_ptr_array_new();
	const char *p = data, *end = data + len;

	while (p < end) {
		const char *q;

		if (p + 1 < end && p[0] == '/' && p[1] == '*') {
			const char *c = g_strstr_len(p + 2, end - p - 2, "*/");
			p = c ? c + 2 : end;
			continue;
		}
		if (*p != '"') {
			p++;
			continue;
		}
		q = memchr(p + 1, '"', end - p - 1);
		if (!q)
			break;
		g_ptr_array_add(lines, g_strndup(p + 1, q - p - 1));
		p = q + 1;
	}
	g_ptr_array_add(lines, NULL);
	return (char **)g_ptr_array_free(lines, FALSE);
}

static GdkPixbuf *decode_xpm(const void *data, size_t len)
{
	g_auto(GStrv) lines = xpm_lines(data, len);
	unsigned w, h, colors, cpp;

	/* gdk-pixbuf trusts the header: check it against the lines */
	if (!lines[0] ||
	    sscanf(lines[0], "%u %u %u %u", &w, &h, &colors, &cpp) != 4 ||
	    w == 0 || h == 0 || w > RASTER_CANVAS_MAX ||
	    h > RASTER_CANVAS_MAX || cpp == 0 || cpp > 31 ||
	    g_strv_length(lines) < 1 + colors + h)
		return NULL;
	for (unsigned i = 1 + colors; i < 1 + colors + h; i++)
		if (strlen(lines[i]) < (size_t)w * cpp)
			return NULL;
	return gdk_pixbuf_new_from_xpm_data((const char **)lines);
}

static int raster_bitmap(const void *data, size_t len, enum icon_ext format,
			 unsigned px, uint8_t *rgba)
{
	g_autoptr(GdkPixbufLoader) loader = NULL;
	g_autoptr(GdkPixbuf) decoded = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(GdkPixbuf) scaled = NULL;
	GdkPixbuf *src, *rgba_src;
	double x, y, w, h;
	int sw, sh;

	/* The decoder follows the file's name, and its content must agree:
	 * nothing else installed ever sees an icon. */
	if (!bitmap_magic_ok(data, len, format))
		return log_debug_errno(-EINVAL, "not a %s file",
				       format == ICON_EXT_PNG ? "PNG" : "XPM");
	if (format == ICON_EXT_XPM) {
		decoded = decode_xpm(data, len);
		if (!decoded)
			return log_debug_errno(-EINVAL, "cannot decode XPM");
		src = decoded;
	} else {
		loader = gdk_pixbuf_loader_new_with_type("png", &error);
		if (!loader)
			return log_debug_errno(-EINVAL, "no decoder: %s",
					       error->message);
		if (!gdk_pixbuf_loader_write(loader, data, len, &error) ||
		    !gdk_pixbuf_loader_close(loader, &error))
			return log_debug_errno(-EINVAL,
					       "cannot decode image: %s",
					       error->message);
		src = gdk_pixbuf_loader_get_pixbuf(loader);
		if (!src)
			return -EINVAL;
	}
	sw = gdk_pixbuf_get_width(src);
	sh = gdk_pixbuf_get_height(src);
	if (sw <= 0 || sh <= 0)
		return -EINVAL;
	fit(sw, sh, px, &x, &y, &w, &h);
	if (w < 1)
		w = 1;
	if (h < 1)
		h = 1;
	rgba_src = gdk_pixbuf_get_has_alpha(src)
			   ? g_object_ref(src)
			   : gdk_pixbuf_add_alpha(src, FALSE, 0, 0, 0);
	/* the filter GTK 3 scales an icon's bitmap with, so that it shows the
	 * same pixels through the mount (the hyperbolic filter put 10-27% of
	 * the pixels of a 24 -> 16 downscale more than 16 apart) */
	scaled = gdk_pixbuf_scale_simple(rgba_src, (int)(w + 0.5),
					 (int)(h + 0.5), GDK_INTERP_BILINEAR);
	g_object_unref(rgba_src);
	if (!scaled)
		return -ENOMEM;

	memset(rgba, 0, (size_t)px * px * 4);
	{
		int ow = gdk_pixbuf_get_width(scaled);
		int oh = gdk_pixbuf_get_height(scaled);
		int stride = gdk_pixbuf_get_rowstride(scaled);
		const guint8 *pix = gdk_pixbuf_read_pixels(scaled);
		int ox = ((int)px - ow) / 2, oy = ((int)px - oh) / 2;

		for (int row = 0; row < oh; row++)
			memcpy(rgba + ((size_t)(oy + row) * px + ox) * 4,
			       pix + (size_t)row * stride, (size_t)ow * 4);
	}
	return 0;
}

void raster_prepare(void)
{
	static const char *const types[] = { "png", "xpm" };

	for (size_t i = 0; i < ELEMENTSOF(types); i++) {
		GdkPixbufLoader *l =
			gdk_pixbuf_loader_new_with_type(types[i], NULL);
		if (l) {
			(void)gdk_pixbuf_loader_close(l, NULL);
			g_object_unref(l);
		}
	}
}

int raster_render(const void *data, size_t len, enum icon_ext format,
		  unsigned px, void **ret_png, size_t *ret_len)
{
	_cleanup_free_ uint8_t *rgba = NULL;
	bool symbolic = px & RASTER_SYMBOLIC;
	int r;

	px = raster_px(px);
	if (px < 1 || px > RASTER_PX_MAX || len > RASTER_SOURCE_MAX ||
	    (symbolic && format != ICON_EXT_SVG))
		return -EINVAL;
	rgba = calloc((size_t)px * px, 4);
	if (!rgba)
		return -ENOMEM;
	if (symbolic)
		r = raster_symbolic(data, len, px, rgba);
	else if (format == ICON_EXT_SVG)
		r = raster_svg(data, len, px, rgba);
	else
		r = raster_bitmap(data, len, format, px, rgba);
	if (r < 0)
		return r;
	return raster_encode_png(rgba, px, px, ret_png, ret_len);
}
