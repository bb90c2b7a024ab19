/* Rasterizing one icon source into an exact-size PNG, in memory.
 *
 * SVG goes through librsvg with no base file (so it cannot pull in other
 * files); PNG and XPM through gdk-pixbuf with a high-quality filter. The
 * picture keeps its aspect ratio, is centered, and the rest is transparent.
 * This runs inside render worker processes (see worker.h), never in the
 * daemon: librsvg can abort or exhaust memory on hostile input. The limits
 * below are shared with the render pool. */
#pragma once

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "index.h"

/* Largest pixel size iconfs renders (1024 px at scale 3). */
#define RASTER_PX_MAX 3072
/* Largest intrinsic SVG size accepted: icons are drawn for a few hundred
 * pixels, a million-pixel canvas is an attack. */
#define RASTER_CANVAS_MAX 16384
/* Largest source file accepted. */
#define RASTER_SOURCE_MAX (16 * 1024 * 1024)

/* A render's pixel size with this bit set asks for GTK's pre-encoded
 * symbolic PNG of an SVG at the size in the other bits: what
 * gtk-encode-symbolic-svg writes, and what GTK 3 and 4 make of a symbolic
 * SVG before they recolour it. The alpha channel is the icon drawn in one
 * colour; red, green and blue are the shares of its "success", "warning"
 * and "error" parts, the foreground being the rest. Carried as one number
 * wherever a render is named (the blob table's key, the workers' protocol),
 * so the two pictures of one source at one size are two renders. */
#define RASTER_SYMBOLIC (1u << 16)

static inline unsigned raster_px(unsigned px)
{
	return px & ~RASTER_SYMBOLIC;
}

/* Load what decoding needs (gdk-pixbuf's loader modules) ahead of the
 * first render, before the worker is confined. */
void raster_prepare(void);

/* Render `data` (a whole source file) at px×px (| RASTER_SYMBOLIC: its
 * symbolic encoding, SVG only). On success returns 0 and a malloc()ed PNG
 * in *ret_png; -EINVAL for a source that cannot be decoded, -ENOMEM. */
int raster_render(const void *data, size_t len, enum icon_ext format,
		  unsigned px, void **ret_png, size_t *ret_len);

/* Encode px×px non-premultiplied RGBA as PNG (settings chosen by measuring
 * size against time; see BENCHMARKS.md). Returns 0 or -ENOMEM. */
int raster_encode_png(const uint8_t *rgba, unsigned width, unsigned height,
		      void **ret_png, size_t *ret_len);

/* Width and height from a PNG's IHDR, without decoding (the daemon's
 * look at a native PNG: inline, so that it links no decoder). -EINVAL when
 * `data` is not a PNG. */
static inline int raster_png_size(const void *data, size_t len, unsigned *ret_w,
				  unsigned *ret_h)
{
	static const uint8_t sig[8] = { 0x89, 'P',  'N',  'G',
					'\r', '\n', 0x1a, '\n' };
	const uint8_t *p = data;

	if (len < 24 || memcmp(p, sig, 8) != 0 || memcmp(p + 12, "IHDR", 4))
		return -EINVAL;
	*ret_w = (uint32_t)p[16] << 24 | p[17] << 16 | p[18] << 8 | p[19];
	*ret_h = (uint32_t)p[20] << 24 | p[21] << 16 | p[22] << 8 | p[23];
	return 0;
}
