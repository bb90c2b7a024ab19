/* File content: native bytes or rendered blobs; see content.h. */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "basedirs.h"
#include "asked.h"
#include "blob.h"
#include "store.h"
#include "content.h"
#include "log.h"
#include "time-util.h"

/* Back-off after a failure that says nothing about the source (deadline,
 * worker died or hit a limit): first retry after this long, doubling up to
 * the cap. Kept in memory only: a restart tries again at once. */
#define RETRY_FIRST_MS 1000
#define RETRY_MAX_MS   (5 * 60 * 1000)
/* Back-offs remembered at most; past that, expired ones are forgotten. */
#define RETRY_KEYS_MAX 4096
/* A reader waiting for another thread's render of the same icon gives up
 * this long after the render's own deadline. */
#define INFLIGHT_SLACK_MS 1000
/* Looks at the stored renders before rendering, while others keep finishing
 * (content_render). */
#define CONTENT_LOOKS 4

/* A stored render's last use is noted at most this often (seconds). */
#define CONTENT_USED_GRANULARITY 3600

struct inflight {
	pthread_cond_t done_cond;
	int done;
	int waiters;
};

struct retry {
	long long not_before; /* now_ms() */
	unsigned delay_ms;
};

struct content {
	struct basedirs_real *real; /* what may be served */
	struct render_pool *pool;
	struct store *store;
	char *shared; /* the shared layer of renders, when usable */
	struct asked *asked; /* what the layer is asked to hold, or NULL */
	unsigned deadline_ms;
	bool stat_tier; /* renders nobody read yet go in the lower tier */
	struct content_counters counters;

	pthread_mutex_t lock;
	GHashTable *inflight;	/* "px:realpath" → struct inflight; lock */
	GHashTable *retry;	/* "px:realpath" → struct retry; lock */
	atomic_ullong finished; /* renders done (inflight_done) */
};

int content_new(const char *db_path, const char *shared, char *const *basedirs,
		unsigned workers, unsigned deadline_ms, long long budget,
		struct content **ret)
{
	struct content *c = g_new0(struct content, 1);
	int r;

	if (shared && blob_layer_check(shared) >= 0) {
		log_info("reading renders from the shared layer '%s'", shared);
		c->shared = g_strdup(shared);
	}
	(void)asked_new(shared, &c->asked);
	c->real = basedirs_real_new(basedirs);
	c->deadline_ms = deadline_ms;
	pthread_mutex_init(&c->lock, NULL);
	c->inflight =
		g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	c->retry =
		g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	r = render_pool_new(workers, deadline_ms, &c->pool);
	if (r >= 0)
		r = store_new(db_path, c->shared, budget, &c->store);
	if (r < 0) {
		content_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

struct content *content_free(struct content *c)
{
	if (!c)
		return NULL;
	store_free(c->store);
	render_pool_free(c->pool);
	asked_free(c->asked);
	basedirs_real_free(c->real);
	g_hash_table_destroy(c->inflight);
	g_hash_table_destroy(c->retry);
	pthread_mutex_destroy(&c->lock);
	g_free(c->shared);
	g_free(c);
	return NULL;
}

struct content_counters *content_counters(struct content *c)
{
	c->counters.cache_errors = store_errors(c->store);
	return &c->counters;
}

int content_sync(struct content *c, unsigned timeout_ms)
{
	return store_sync(c->store, timeout_ms);
}

void content_ask_theme(struct content *c, const char *theme)
{
	asked_note_theme(c->asked, theme);
}

void content_set_stat_tier(struct content *c, bool on)
{
	c->stat_tier = on;
}

void content_drop_source(struct content *c, const char *real)
{
	store_drop_source(c->store, real);
}

unsigned long long content_worker_restarts(struct content *c)
{
	unsigned long long renders, restarts;

	render_pool_counters(c->pool, &renders, &restarts);
	return restarts;
}

void content_trim_workers(struct content *c)
{
	(void)render_pool_trim(c->pool, RENDER_IDLE_MS);
}

int content_reader_new(struct content *c, sqlite3 *db, struct blob_reader **ret)
{
	return blob_reader_new(db, c->shared, ret);
}

long long content_stored_bytes(struct content *c)
{
	return store_total(c->store);
}

void icon_content_clear(struct icon_content *ic)
{
	g_free(ic->source);
	g_free((char *)ic->stored.source);
	*ic = (struct icon_content){ 0 };
}

bool icon_content_same(const struct icon_content *a,
		       const struct icon_content *b)
{
	return a->native == b->native && a->px == b->px &&
	       a->stored.ino == b->stored.ino &&
	       a->stored.size == b->stored.size &&
	       a->stored.mtime_ns == b->stored.mtime_ns &&
	       g_strcmp0(a->source, b->source) == 0 &&
	       g_strcmp0(a->stored.source, b->stored.source) == 0;
}

/* The real path of `source` when it lies inside a base directory. */
static char *content_real_source(struct content *c, const char *source)
{
	char *real = basedirs_real_inside(c->real, source, false);

	if (!real)
		log_warning("'%s' resolves outside the icon directories, not "
			    "served",
			    source);
	return real;
}

/* Open the real file behind `source` when it stays inside the base
 * directories: resolved beneath its own base directory by the kernel (one
 * system call, a readlink(2) more for *ret_real when it is not NULL),
 * else (a link into another base directory, an absolute one) its real
 * path checked, then opened without following a link that appeared
 * since. */
static int open_real(struct content *c, const char *source, char **ret_real)
{
	_cleanup_free_ char *real = NULL;
	int fd;

	/* -EPERM: a seccomp filter (a service's SystemCallFilter) that does
	 * not know openat2 */
	fd = basedirs_open_beneath(c->real, source, ret_real);
	if (fd >= 0 || (fd != -EXDEV && fd != -ENOSYS && fd != -EPERM))
		return fd == -ELOOP ? -ENOENT : fd;
	real = content_real_source(c, source);
	if (!real)
		return -ENOENT;
	fd = open(real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ELOOP ? -ENOENT : -errno;
	if (ret_real)
		*ret_real = TAKE_PTR(real);
	return fd;
}

int content_open_source(struct content *c, const char *source)
{
	return open_real(c, source, NULL);
}

/* A PNG source already of the asked size is served as it is (with
 * `smaller`, one no larger either). */
static int png_as_is(int fd, unsigned px, bool smaller)
{
	uint8_t hdr[24];
	unsigned w, h;

	if (pread(fd, hdr, sizeof(hdr), 0) != sizeof(hdr) ||
	    raster_png_size(hdr, sizeof(hdr), &w, &h) < 0)
		return 0;
	return smaller ? w <= px && h <= px : w == px && h == px;
}

static int read_fd(int fd, size_t size, void **ret)
{
	_cleanup_free_ uint8_t *buf = malloc(size ? size : 1);
	size_t got = 0;

	if (!buf)
		return -ENOMEM;
	while (got < size) {
		ssize_t n = pread(fd, buf + got, size - got, got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO; /* shrank under us */
		got += n;
	}
	*ret = TAKE_PTR(buf);
	return 0;
}

/* A stored or queued render: 0 (with the bytes when ret_data is not NULL),
 * -EIO for a verdict on the source, -ENOENT when there is none. A read
 * (the bytes wanted) is noted as a use when the stored one is old or only
 * answered stats so far; a stat is not. `fd`: the source, or -1 (blob_get).
 */
static int content_stored(struct content *c, struct blob_reader *b,
			  const struct blob_key *k, int fd, void **ret_data,
			  size_t *ret_len)
{
	long long used = 0;
	int r;

	r = store_get_pending(c->store, k, ret_data, ret_len);
	if (r != -ENOENT)
		return r;
	r = blob_get(b, k, fd, ret_data, ret_len, &used);
	if (r == BLOB_FROM_SHARED) {
		atomic_fetch_add(&c->counters.shared_hits, 1);
		return 0;
	}
	if (r == 0 && ret_data &&
	    time(NULL) - used > CONTENT_USED_GRANULARITY)
		store_touch(c->store, k->source, k->px);
	return r;
}

/* -EIO while a recent failure's back-off lasts. */
static int retry_check(struct content *c, const char *key)
{
	struct retry *t;
	int r = 0;

	pthread_mutex_lock(&c->lock);
	t = g_hash_table_lookup(c->retry, key);
	if (t && now_ms() < t->not_before)
		r = -EIO;
	pthread_mutex_unlock(&c->lock);
	return r;
}

static gboolean retry_expired(gpointer key, gpointer value, gpointer data)
{
	const struct retry *t = value;

	(void)key, (void)data;
	return now_ms() >= t->not_before;
}

static void retry_note(struct content *c, const char *key, bool failed)
{
	struct retry *t;

	pthread_mutex_lock(&c->lock);
	t = g_hash_table_lookup(c->retry, key);
	if (!failed) {
		if (t)
			g_hash_table_remove(c->retry, key);
	} else {
		if (!t && g_hash_table_size(c->retry) >= RETRY_KEYS_MAX)
			g_hash_table_foreach_remove(c->retry, retry_expired,
						    NULL);
		if (!t) {
			t = g_new0(struct retry, 1);
			g_hash_table_insert(c->retry, g_strdup(key), t);
		}
		t->delay_ms = t->delay_ms ? MIN(t->delay_ms * 2, RETRY_MAX_MS)
					  : RETRY_FIRST_MS;
		t->not_before = now_ms() + t->delay_ms;
	}
	pthread_mutex_unlock(&c->lock);
}

/* Wait for another thread's render of `key`; false when it overran. */
static bool inflight_wait(struct content *c, struct inflight *inf)
{
	long long deadline = now_ms() + c->deadline_ms + INFLIGHT_SLACK_MS;
	struct timespec until = { .tv_sec = deadline / 1000,
				  .tv_nsec = deadline % 1000 * 1000000 };
	int r = 0;

	inf->waiters++;
	while (!inf->done && r == 0)
		r = pthread_cond_timedwait(&inf->done_cond, &c->lock, &until);
	if (--inf->waiters == 0 && inf->done) {
		pthread_cond_destroy(&inf->done_cond);
		g_free(inf);
	}
	return r == 0;
}

static void inflight_done(struct content *c, const char *key,
			  struct inflight *inf)
{
	pthread_mutex_lock(&c->lock);
	g_hash_table_remove(c->inflight, key);
	atomic_fetch_add(&c->finished, 1);
	inf->done = 1;
	pthread_cond_broadcast(&inf->done_cond);
	if (inf->waiters == 0) {
		pthread_cond_destroy(&inf->done_cond);
		g_free(inf);
	}
	pthread_mutex_unlock(&c->lock);
}

static const char *symbolic_text(unsigned px)
{
	return px & RASTER_SYMBOLIC ? ", symbolic" : "";
}

/* Render (source, px) through the pool and queue the result for the blob
 * writer. A verdict on the source (-EINVAL, -EFBIG) is stored; any other
 * failure only delays the next try. */
static int content_render_now(struct content *c, int fd,
			      const struct blob_key *k, int ext,
			      const char *key, void **ret_data, size_t *ret_len)
{
	_cleanup_free_ void *src = NULL;
	_cleanup_free_ void *png = NULL;
	size_t png_len = 0;
	int r;

	r = k->size > RASTER_SOURCE_MAX ? -EFBIG
					: read_fd(fd, (size_t)k->size, &src);
	if (r >= 0) {
		atomic_fetch_add(&c->counters.renders, 1);
		r = render_pool_render(c->pool, src, (size_t)k->size, ext,
				       k->px, &png, &png_len);
	}
	if (r == -EINVAL || r == -EFBIG) {
		atomic_fetch_add(&c->counters.render_failures, 1);
		log_warning("cannot render '%s' at %u px%s (%s): EIO until it "
			    "changes",
			    k->source, raster_px(k->px), symbolic_text(k->px),
			    r == -EFBIG ? "too large" : "not a usable image");
		store_put(c->store, k, -r, NULL, 0, false);
		return -EIO;
	}
	if (r < 0) {
		atomic_fetch_add(&c->counters.render_failures, 1);
		log_warning_errno(r,
				  "rendering '%s' at %u px%s failed: %m, will "
				  "try again",
				  k->source, raster_px(k->px),
				  symbolic_text(k->px));
		retry_note(c, key, true);
		return -EIO;
	}
	retry_note(c, key, false);
	/* users ask the layer for pictures only (asked.h); it holds the
	 * default theme's encodings anyway (iconfs render) */
	if (!(k->px & RASTER_SYMBOLIC))
		asked_note(c->asked, k->source, k->px);
	/* the source's bytes, hashed: the render travels with them (blob.h) */
	store_put(c->store,
		  &(struct blob_key){ .source = k->source,
				      .px = k->px,
				      .ino = k->ino,
				      .size = k->size,
				      .mtime_ns = k->mtime_ns,
				      .hash = blob_source_hash(src,
							       (size_t)k->size) },
		  0, png, png_len, c->stat_tier && !ret_data);
	*ret_len = png_len;
	if (ret_data)
		*ret_data = TAKE_PTR(png);
	return 0;
}

/* The rendered file for (source, px): stored, queued, or rendered now
 * (-EAGAIN instead with `stored_only`), once however many threads ask at
 * the same time. Every wait is bounded by the render deadline. Every
 * render of the daemon and of `iconfs prerender` starts here (the README's
 * "Why was this icon rendered?" names the callers). */
static int content_render(struct content *c, struct blob_reader *b, int fd,
			  const struct blob_key *k, int ext, bool stored_only,
			  void **ret_data, size_t *ret_len)
{
	g_autofree char *key = blob_key_text(k);
	struct inflight *inf;
	int r;

	for (int looks = 1;; looks++) {
		unsigned long long finished = atomic_load(&c->finished);

		r = content_stored(c, b, k, fd, ret_data, ret_len);
		if (r != -ENOENT) {
			if (r == 0)
				atomic_fetch_add(&c->counters.blob_hits, 1);
			return r;
		}
		if (stored_only)
			return -EAGAIN;
		r = retry_check(c, key);
		if (r < 0)
			return r;
		pthread_mutex_lock(&c->lock);
		inf = g_hash_table_lookup(c->inflight, key);
		/* A render that finished between the look above and the lock
		 * may be this one, queued for the writer by now: look again
		 * rather than render it twice. */
		if (!inf && atomic_load(&c->finished) != finished &&
		    looks < CONTENT_LOOKS) {
			pthread_mutex_unlock(&c->lock);
			continue;
		}
		if (!inf)
			break;
		if (!inflight_wait(c, inf)) {
			pthread_mutex_unlock(&c->lock);
			return -EIO;
		}
		pthread_mutex_unlock(&c->lock);
	}
	inf = g_new0(struct inflight, 1);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&inf->done_cond, &ca);
		pthread_condattr_destroy(&ca);
	}
	g_hash_table_insert(c->inflight, g_strdup(key), inf);
	pthread_mutex_unlock(&c->lock);

	r = content_render_now(c, fd, k, ext, key, ret_data, ret_len);
	inflight_done(c, key, inf);
	return r;
}

static int content_open_key(struct content *c, const char *source, unsigned px,
			    struct blob_key *k, char **ret_real,
			    struct stat *st)
{
	_cleanup_free_ char *real = NULL;
	int fd = open_real(c, source, &real);

	if (fd < 0)
		return fd;
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		(void)close(fd);
		return -ENOENT;
	}
	*k = (struct blob_key){ .px = px,
				.ino = (long long)st->st_ino,
				.size = (long long)st->st_size,
				.mtime_ns = timespec_ns(st->st_mtim) };
	*ret_real = TAKE_PTR(real);
	k->source = *ret_real;
	return fd;
}

int content_resolve(struct content *c, struct blob_reader *b,
		    const char *source, int ext, unsigned px, unsigned flags,
		    struct icon_content *ret)
{
	_cleanup_free_ char *real = NULL;
	_cleanup_close_ int fd = -1;
	struct blob_key k;
	struct stat st;
	size_t len;
	int r;

	if ((px & RASTER_SYMBOLIC) && ext != ICON_EXT_SVG)
		return -ENOENT;
	fd = content_open_key(c, source, px, &k, &real, &st);
	if (fd < 0)
		return fd;
	*ret = (struct icon_content){ .mtime = st.st_mtim };
	if (px == 0 ||
	    (ext == ICON_EXT_PNG &&
	     png_as_is(fd, px, flags & CONTENT_SMALLER_AS_IS))) {
		atomic_fetch_add(&c->counters.native, 1);
		ret->native = 1;
		ret->size = st.st_size;
	} else {
		bool unsized = flags & CONTENT_UNSIZED;

		r = content_render(c, b, fd, &k, ext,
				   flags & (CONTENT_STORED_ONLY | CONTENT_UNSIZED),
				   NULL, &len);
		if (r == -EAGAIN && unsized && !(flags & CONTENT_STORED_ONLY)) {
			ret->unsized = true;
			len = 0;
		} else if (r < 0)
			return r;
		ret->px = px;
		ret->size = len;
		ret->stored = k;
		ret->stored.source = g_strdup(real);
	}
	ret->ext = ext;
	ret->source = g_strdup(source);
	return 0;
}

int content_load(struct content *c, struct blob_reader *b,
		 const struct icon_content *ic, bool stored_only,
		 void **ret_data, size_t *ret_len)
{
	_cleanup_free_ char *real = NULL;
	_cleanup_close_ int fd = -1;
	struct blob_key k;
	struct stat st;
	int r;

	if (ic->native)
		return -EINVAL;
	/* Stored under the key the lookup resolved: while the watcher runs,
	 * a change of the source invalidates the node before a read could
	 * see other bytes, and these match the size the kernel was given. */
	if (ic->stored.source) {
		r = content_stored(c, b, &ic->stored, -1, ret_data, ret_len);
		if (r == 0)
			atomic_fetch_add(&c->counters.blob_hits, 1);
		if (r != -ENOENT)
			return r;
	}
	fd = content_open_key(c, ic->source, ic->px, &k, &real, &st);
	if (fd < 0)
		return fd;
	return content_render(c, b, fd, &k, ic->ext, stored_only, ret_data,
			      ret_len);
}
