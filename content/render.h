/* The render pool: a few long-lived worker processes (the program
 * RENDER_WORKER, see worker.h and wire.h) that rasterize sources with
 * memory and CPU limits, under a wall-clock deadline that covers the whole
 * request:
 * waiting for a free worker, sending the source and reading the PNG. A
 * worker that dies, overruns or answers nonsense is killed and replaced,
 * and that request fails; other requests are not affected.
 *
 * The daemon reads the source itself and sends its bytes, so a worker never
 * opens files. render_pool_render() is thread-safe and blocks only its
 * caller; the returned PNG is malloc()ed and owned by the caller. */
#pragma once

#include <stddef.h>

#include "raster.h"

struct render_pool;

/* The worker program's name, installed in ICONFS_LIBEXECDIR. */
#define RENDER_WORKER "iconfs-render"

/* Default wall-clock deadline for one render, in milliseconds. */
#define RENDER_DEADLINE_MS 5000

int render_pool_new(unsigned workers, unsigned deadline_ms,
		    struct render_pool **ret);
struct render_pool *render_pool_free(struct render_pool *p);

/* Largest PNG a worker may answer with. */
#define RENDER_PNG_MAX (64 * 1024 * 1024)

/* 0 and the PNG of `data` at `px` (| RASTER_SYMBOLIC, raster.h). -EINVAL
 * is the verdict on the source: it cannot be decoded or is over a limit,
 * and will fail the same way again. Any other -errno (-ETIMEDOUT, -ENOMEM,
 * -EPIPE for a worker that died, a spawn failure) says nothing about the
 * source: try again later. */
int render_pool_render(struct render_pool *p, const void *data, size_t len,
		       enum icon_ext format, unsigned px, void **ret_png,
		       size_t *ret_len);

/* Renders performed and workers replaced so far. */
void render_pool_counters(struct render_pool *p, unsigned long long *renders,
			  unsigned long long *restarts);

/* Workers idle this long are stopped by the mount (render_pool_trim, at
 * the watcher's next tick): a worker holds librsvg and what its renders
 * left in its heap, 7 MiB of PSS after a first login's 300 Papirus icons,
 * and a mount at rest renders nothing. Starting one again costs an exec
 * and librsvg's set-up, once per burst of renders. */
#define RENDER_IDLE_MS 5000

/* Stop the workers that rendered nothing for `idle_ms`; the next render
 * starts one again. Returns how many are left running. */
unsigned render_pool_trim(struct render_pool *p, long long idle_ms);
