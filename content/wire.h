/* The render workers' protocol, spoken on a socketpair between the render
 * pool (render.h) and a worker program (worker.h), both built from this
 * tree; host byte order:
 *   request:  u32 px (| RASTER_SYMBOLIC), u32 format (enum icon_ext),
 *             u32 len, len bytes of source
 *   reply:    i32 status (0 or -errno), u32 len, len bytes of PNG
 * and exact reads and writes on it under a deadline. Owns nothing. */
#pragma once

#include <stddef.h>

/* The worker's end of the socket. */
#define WIRE_FD 3

/* A deadline that never passes: the worker waiting for its next request. */
#define WIRE_NO_DEADLINE (-1LL)

/* Send exactly `len` bytes before `deadline` (now_ms() time): a stopped
 * worker fills the socket buffer, and the sender must not block on it.
 * 0 or -errno (-ETIMEDOUT). */
int wire_write(int fd, const void *buf, size_t len, long long deadline);

/* Read exactly `len` bytes before `deadline`. 0 or -errno (-EPIPE at the
 * end of the stream, -ETIMEDOUT). */
int wire_read(int fd, void *buf, size_t len, long long deadline);
