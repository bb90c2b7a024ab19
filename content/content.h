/* What a file of the mounted tree holds, and getting it: the source's own
 * bytes when it already is a PNG of the asked pixel size (or the asked SVG),
 * else an exact-size PNG from the blob table, rendered through the pool on
 * a miss. Concurrent requests for the same unrendered (source, px) share
 * one render. Sources are only served from inside the base directories.
 *
 * No call writes SQLite or waits on its write lock: renders are queued for
 * the blob writer (store.h) and served from memory until stored; every
 * wait (a free worker, the worker, another thread's render of the same
 * icon) ends by the render deadline. Only a verdict on the source is
 * stored as a failure; a failure of the machinery (deadline, a worker that
 * died or hit a limit) is retried after a short, growing back-off.
 *
 * One struct content is shared by all threads; every call takes the
 * caller's own blob reader (blob.h) on its read-only connection. */
#pragma once

#include <sqlite3.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "blob.h"
#include "render.h"

struct content_counters {
	atomic_ullong renders; /* renders requested from the pool */
	atomic_ullong render_failures;
	atomic_ullong blob_hits;    /* answered from the blob table */
	atomic_ullong shared_hits;  /* of which from the shared layer */
	atomic_ullong native;	    /* served as the source's own bytes */
	atomic_ullong cache_errors; /* renders not stored (disk full) */
};

struct content;

/* `basedirs` (NULL-terminated) bound what may be served; renders are stored
 * in the index at `db_path` (already opened and migrated), within `budget`
 * bytes, and read from there or else from the shared layer at `shared`
 * (NULL for none; ignored with a log line when unusable). */
int content_new(const char *db_path, const char *shared, char *const *basedirs,
		unsigned workers, unsigned deadline_ms, long long budget,
		struct content **ret);

/* A blob reader for connection `db` of the calling thread, with the shared
 * layer below it when there is one. */
int content_reader_new(struct content *c, sqlite3 *db,
		       struct blob_reader **ret);

/* Bytes of renders stored in the user's table (the writer's running
 * total). */
long long content_stored_bytes(struct content *c);
struct content *content_free(struct content *c);

struct content_counters *content_counters(struct content *c);

/* The mount serves `theme`: the shared layer is asked to hold its
 * synthesized files (asked.h). */
void content_ask_theme(struct content *c, const char *theme);

/* Wait until the renders queued so far are stored (or given up). */
int content_sync(struct content *c, unsigned timeout_ms);

/* With `on` (a mount), a render that only answered a stat is stored in the
 * lower tier of the budget (BLOB_STAT_TIER), evicted before any render a
 * program read; its first read lifts it. Off (pre-rendering) by default. */
void content_set_stat_tier(struct content *c, bool on);

/* Forget every stored render of the source at real path `real`. */
void content_drop_source(struct content *c, const char *real);

/* Render workers replaced so far (crashed, killed at the deadline). */
unsigned long long content_worker_restarts(struct content *c);
/* Stop the render workers idle for RENDER_IDLE_MS (render.h). */
void content_trim_workers(struct content *c);

/* The content of one file. */
struct icon_content {
	char *source;  /* resolved path, as the lookup gave it (g_free) */
	int native;    /* 1: the source's own bytes */
	int ext;       /* the source's format (enum icon_ext) */
	unsigned px;   /* 0 for native content */
	/* to be rendered, not stored yet: `size` is not known until
	 * content_resolve runs again without CONTENT_UNSIZED */
	bool unsized;
	uint64_t size; /* exact st_size */
	struct timespec mtime; /* the source's */
	/* rendered: the blob's key as resolved (source: the real path,
	 * g_free), so that a read finds the blob without resolving again */
	struct blob_key stored;
};

void icon_content_clear(struct icon_content *ic);

/* Whether a and b are the file of the same bytes of one source (path,
 * inode, size, mtime) at the same size. */
bool icon_content_same(const struct icon_content *a,
		       const struct icon_content *b);

enum content_flags {
	/* -EAGAIN where a render would be needed */
	CONTENT_STORED_ONLY = 1 << 0,
	/* a PNG source no larger than px×px is served as it is (Qt shows a
	 * smaller bitmap at its own size) */
	CONTENT_SMALLER_AS_IS = 1 << 1,
	/* where a render would be needed, describe the file without it, its
	 * size unknown (icon_content.unsized): what a program only asks
	 * whether the file exists need not be rendered */
	CONTENT_UNSIZED = 1 << 2,
};

/* Describe the file for `source` (extension index `ext`) at `px` pixels, or
 * its own bytes when px == 0 or it already is a PNG of that size; with
 * px | RASTER_SYMBOLIC, GTK's pre-encoded symbolic PNG of an SVG source
 * (raster.h), never its own bytes (-ENOENT for another format). May
 * render, unless CONTENT_STORED_ONLY (`flags`). -ENOENT for a source
 * outside the base directories or gone; -EIO for a source that cannot be
 * rendered. */
int content_resolve(struct content *c, struct blob_reader *b,
		    const char *source, int ext, unsigned px, unsigned flags,
		    struct icon_content *ret);

/* The bytes of a resolved rendered file (malloc()ed); -EAGAIN with
 * `stored_only` where they would need a render. For native content, open
 * the source instead: content_open_source(). */
int content_load(struct content *c, struct blob_reader *b,
		 const struct icon_content *ic, bool stored_only,
		 void **ret_data, size_t *ret_len);

/* Open a native source read-only after checking it stays inside the base
 * directories. Returns an fd or -errno. */
int content_open_source(struct content *c, const char *source);
