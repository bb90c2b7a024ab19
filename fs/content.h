/* What a file of the mounted tree holds, and getting it: the source's own
 * bytes when it already is a PNG of the asked pixel size (or the asked SVG),
 * else an exact-size PNG from the blob table, rendered through the pool on
 * a miss. Concurrent requests for the same unrendered (source, px) share
 * one render. Sources are only served from inside the base directories.
 *
 * One struct content is shared by all threads; every call takes the
 * caller's own SQLite connection. */
#pragma once

#include <sqlite3.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "render.h"

struct content_counters {
	atomic_ullong renders; /* renders requested from the pool */
	atomic_ullong render_failures;
	atomic_ullong blob_hits;    /* answered from the blob table */
	atomic_ullong native;	    /* served as the source's own bytes */
	atomic_ullong cache_errors; /* blob writes that failed (disk full) */
};

struct content;

/* `basedirs` (NULL-terminated) bound what may be served. */
int content_new(char *const *basedirs, unsigned workers, unsigned deadline_ms,
		long long budget, struct content **ret);
struct content *content_free(struct content *c);

struct content_counters *content_counters(struct content *c);

/* Render workers replaced so far (crashed, killed at the deadline). */
unsigned long long content_worker_restarts(struct content *c);

/* The content of one file. */
struct icon_content {
	char *source;  /* resolved path, as the lookup gave it (g_free) */
	int native;    /* 1: the source's own bytes */
	int ext;       /* the source's format (enum raster_format) */
	unsigned px;   /* 0 for native content */
	uint64_t size; /* exact st_size */
	struct timespec mtime; /* the source's */
};

void icon_content_clear(struct icon_content *ic);

/* Describe the file for `source` (extension index `ext`) at `px` pixels, or
 * its own bytes when px == 0. May render. -ENOENT for a source outside the
 * base directories or gone; -EIO for a source that cannot be rendered. */
int content_resolve(struct content *c, sqlite3 *db, const char *source, int ext,
		    unsigned px, struct icon_content *ret);

/* The bytes of a resolved rendered file (malloc()ed). For native content,
 * open the source instead: content_open_source(). */
int content_load(struct content *c, sqlite3 *db, const struct icon_content *ic,
		 void **ret_data, size_t *ret_len);

/* Open a native source read-only after checking it stays inside the base
 * directories. Returns an fd or -errno. */
int content_open_source(struct content *c, const char *source);
