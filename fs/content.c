/* File content: native bytes or rendered blobs; see content.h. */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>

#include "blob.h"
#include "content.h"
#include "log.h"
#include "time-util.h"

/* Writes between two checks of the blob table's byte budget. */
#define TRIM_EVERY 64

struct inflight {
	pthread_cond_t done_cond;
	int done;
	int waiters;
};

struct content {
	char **basedirs;
	char **realbases; /* realpath of each base dir, NULL until it exists;
			   * lock */
	struct render_pool *pool;
	long long budget;
	atomic_uint puts;
	struct content_counters counters;

	pthread_mutex_t lock;
	GHashTable *inflight; /* "px:realpath" → struct inflight; lock */
	/* Blob writes of this process go one at a time: waiting here is
	 * cheap, SQLite's busy handler sleeps in milliseconds. */
	pthread_mutex_t write_lock;
};

int content_new(char *const *basedirs, unsigned workers, unsigned deadline_ms,
		long long budget, struct content **ret)
{
	struct content *c = g_new0(struct content, 1);
	int r;

	c->basedirs = g_strdupv((char **)basedirs);
	c->realbases = g_new0(char *, g_strv_length(c->basedirs) + 1);
	c->budget = budget;
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->write_lock, NULL);
	c->inflight =
		g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	r = render_pool_new(workers, deadline_ms, &c->pool);
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
	render_pool_free(c->pool);
	for (guint i = 0; c->basedirs && c->basedirs[i]; i++)
		free(c->realbases[i]);
	g_free(c->realbases);
	g_strfreev(c->basedirs);
	g_hash_table_destroy(c->inflight);
	pthread_mutex_destroy(&c->lock);
	pthread_mutex_destroy(&c->write_lock);
	g_free(c);
	return NULL;
}

struct content_counters *content_counters(struct content *c)
{
	return &c->counters;
}

unsigned long long content_worker_restarts(struct content *c)
{
	unsigned long long renders, restarts;

	render_pool_counters(c->pool, &renders, &restarts);
	return restarts;
}

void icon_content_clear(struct icon_content *ic)
{
	g_free(ic->source);
	*ic = (struct icon_content){ 0 };
}

/* The real path of `source` when it lies inside a base directory. */
static char *content_real_source(struct content *c, const char *source)
{
	_cleanup_free_ char *real = realpath(source, NULL);
	bool inside = false;

	if (!real)
		return NULL;
	pthread_mutex_lock(&c->lock);
	for (guint i = 0; c->basedirs[i] && !inside; i++) {
		const char *b;
		size_t n;

		/* base directories may appear after the mount */
		if (!c->realbases[i])
			c->realbases[i] = realpath(c->basedirs[i], NULL);
		b = c->realbases[i];
		if (!b)
			continue;
		n = strlen(b);
		inside = strncmp(real, b, n) == 0 && real[n] == '/';
	}
	pthread_mutex_unlock(&c->lock);
	if (inside)
		return TAKE_PTR(real);
	log_warning("'%s' resolves outside the icon directories, not served",
		    source);
	return NULL;
}

/* Open the real file behind `source` (never following a link that
 * appeared since), after checking it stays inside the base directories. */
static int open_real(struct content *c, const char *source, char **ret_real)
{
	_cleanup_free_ char *real = content_real_source(c, source);
	int fd;

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

/* A PNG source already of the asked size is served as it is. */
static int png_is_exact(int fd, unsigned px)
{
	uint8_t hdr[24];
	unsigned w, h;

	if (pread(fd, hdr, sizeof(hdr), 0) != sizeof(hdr))
		return 0;
	return raster_png_size(hdr, sizeof(hdr), &w, &h) == 0 && w == px &&
	       h == px;
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

/* Render (source, px) once, however many threads ask at the same time; the
 * result lands in the blob table. When it cannot be stored (disk full) the
 * bytes are returned to this caller only. */
static int content_render(struct content *c, sqlite3 *db, int fd,
			  const struct blob_key *k, int ext, void **ret_data,
			  size_t *ret_len)
{
	g_autofree char *key = g_strdup_printf("%u:%s", k->px, k->source);
	_cleanup_free_ void *src = NULL;
	_cleanup_free_ void *png = NULL;
	struct inflight *inf;
	size_t png_len = 0;
	int r, w;

	for (;;) {
		r = blob_get(db, k, ret_data, ret_len);
		if (r != -ENOENT) {
			if (r == 0)
				atomic_fetch_add(&c->counters.blob_hits, 1);
			return r;
		}
		pthread_mutex_lock(&c->lock);
		inf = g_hash_table_lookup(c->inflight, key);
		if (!inf)
			break;
		inf->waiters++;
		while (!inf->done)
			pthread_cond_wait(&inf->done_cond, &c->lock);
		if (--inf->waiters == 0)
			g_free(inf);
		pthread_mutex_unlock(&c->lock);
		/* When the first render could not be stored we render too,
		 * rather than wait forever on a full disk. */
		w = blob_get(db, k, ret_data, ret_len);
		if (w != -ENOENT)
			return w;
		pthread_mutex_lock(&c->lock);
		if (!g_hash_table_contains(c->inflight, key))
			break;
		pthread_mutex_unlock(&c->lock);
	}
	inf = g_new0(struct inflight, 1);
	pthread_cond_init(&inf->done_cond, NULL);
	g_hash_table_insert(c->inflight, g_strdup(key), inf);
	pthread_mutex_unlock(&c->lock);

	r = k->size > RASTER_SOURCE_MAX ? -EFBIG
					: read_fd(fd, (size_t)k->size, &src);
	if (r >= 0) {
		atomic_fetch_add(&c->counters.renders, 1);
		r = render_pool_render(c->pool, src, (size_t)k->size, ext,
				       k->px, &png, &png_len);
	}
	if (r < 0) {
		atomic_fetch_add(&c->counters.render_failures, 1);
		log_warning("cannot render '%s' at %u px: EIO until it "
			    "changes",
			    k->source, k->px);
		r = -EIO;
	}
	pthread_mutex_lock(&c->write_lock);
	w = blob_put(db, k, r < 0 ? -r : 0, png, png_len);
	if (w >= 0 && atomic_fetch_add(&c->puts, 1) % TRIM_EVERY == 0)
		(void)blob_trim(db, c->budget);
	pthread_mutex_unlock(&c->write_lock);
	if (w < 0) {
		unsigned long long n =
			atomic_fetch_add(&c->counters.cache_errors, 1) + 1;

		/* a full disk fails every write: say so now and then */
		if ((n & (n - 1)) == 0)
			log_warning_errno(w,
					  "cannot store rendered '%s': %m, "
					  "serving without caching (%llu "
					  "times so far)",
					  k->source, n);
	}

	pthread_mutex_lock(&c->lock);
	g_hash_table_remove(c->inflight, key);
	inf->done = 1;
	pthread_cond_broadcast(&inf->done_cond);
	if (inf->waiters == 0)
		g_free(inf);
	pthread_mutex_unlock(&c->lock);

	if (r < 0)
		return r;
	*ret_len = png_len;
	if (ret_data)
		*ret_data = TAKE_PTR(png);
	return 0;
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

int content_resolve(struct content *c, sqlite3 *db, const char *source, int ext,
		    unsigned px, struct icon_content *ret)
{
	_cleanup_free_ char *real = NULL;
	_cleanup_close_ int fd = -1;
	struct blob_key k;
	struct stat st;
	size_t len;
	int r;

	fd = content_open_key(c, source, px, &k, &real, &st);
	if (fd < 0)
		return fd;
	*ret = (struct icon_content){ .mtime = st.st_mtim };
	if (px == 0 || (ext == RASTER_PNG && png_is_exact(fd, px))) {
		atomic_fetch_add(&c->counters.native, 1);
		ret->native = 1;
		ret->size = st.st_size;
	} else {
		r = content_render(c, db, fd, &k, ext, NULL, &len);
		if (r < 0)
			return r;
		ret->px = px;
		ret->size = len;
	}
	ret->ext = ext;
	ret->source = g_strdup(source);
	return 0;
}

int content_load(struct content *c, sqlite3 *db, const struct icon_content *ic,
		 void **ret_data, size_t *ret_len)
{
	_cleanup_free_ char *real = NULL;
	_cleanup_close_ int fd = -1;
	struct blob_key k;
	struct stat st;

	fd = content_open_key(c, ic->source, ic->px, &k, &real, &st);
	if (fd < 0)
		return fd;
	if (ic->native)
		return -EINVAL;
	return content_render(c, db, fd, &k, ic->ext, ret_data, ret_len);
}
