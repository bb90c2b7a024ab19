/* The render worker pool and the worker's side of the protocol.
 *
 * Protocol on a socketpair, host byte order (both ends are this binary):
 *   request:  u32 px, u32 format, u32 len, len bytes of source
 *   reply:    i32 status (0 or -errno), u32 len, len bytes of PNG */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>

#include "log.h"
#include "time-util.h"
#include "render.h"
#include "sandbox.h"
#include "subprocess.h"

/* Limits of one worker process. */
#define WORKER_AS_LIMIT	 (768ULL * 1024 * 1024)
#define WORKER_CPU_LIMIT 600 /* seconds over its life; then it is replaced */
#define WORKER_FD	 3

struct worker {
	pid_t pid;
	int fd;
	int busy;
};

struct render_pool {
	pthread_mutex_t lock;
	pthread_cond_t free_cond;
	struct worker *workers; /* guarded by lock */
	unsigned n_workers;
	unsigned deadline_ms;
	char exe[4096];
	unsigned long long renders, restarts; /* guarded by lock */
};

/* ---- both sides: exact reads and writes, with a deadline ---- */

#define NO_DEADLINE (-1LL)

/* Wait until `fd` is ready for `events` or the deadline (now_ms(); or
 * NO_DEADLINE: the worker waiting for its next request) passes. */
static int poll_deadline(int fd, short events, long long deadline)
{
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = events };
		long long left = deadline - now_ms();
		int r;

		if (deadline == NO_DEADLINE)
			left = -1;
		else if (left <= 0)
			return -ETIMEDOUT;
		r = poll(&pfd, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ETIMEDOUT;
		return 0;
	}
}

/* Send exactly len bytes before the deadline: a stopped worker fills the
 * socket buffer, and the sender must not block on it. */
static int write_deadline(int fd, const void *buf, size_t len,
			  long long deadline)
{
	const uint8_t *b = buf;

	while (len > 0) {
		ssize_t n;
		int r = poll_deadline(fd, POLLOUT, deadline);

		if (r < 0)
			return r;
		n = send(fd, b, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		b += n;
		len -= n;
	}
	return 0;
}

/* Read exactly len bytes before the deadline. */
static int read_deadline(int fd, void *buf, size_t len, long long deadline)
{
	uint8_t *b = buf;

	while (len > 0) {
		ssize_t n;
		int r = poll_deadline(fd, POLLIN, deadline);

		if (r < 0)
			return r;
		n = recv(fd, b, len, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		b += n;
		len -= n;
	}
	return 0;
}

/* ---- worker side ---- */

int render_worker_main(void)
{
	struct rlimit as = { WORKER_AS_LIMIT, WORKER_AS_LIMIT };
	struct rlimit cpu = { WORKER_CPU_LIMIT, WORKER_CPU_LIMIT };

#ifndef __SANITIZE_ADDRESS__
	/* AddressSanitizer reserves terabytes of address space up front; its
	 * builds rely on the deadline alone. */
	(void)setrlimit(RLIMIT_AS, &as);
#else
	(void)as;
#endif
	(void)setrlimit(RLIMIT_CPU, &cpu);
	(void)setpriority(PRIO_PROCESS, 0, 5);
	/* load what decoding needs (loader modules) before the filter */
	raster_prepare();
	if (sandbox_enter() < 0)
		return 1;

	for (;;) {
		uint32_t hdr[3];
		_cleanup_free_ void *src = NULL;
		_cleanup_free_ void *png = NULL;
		size_t png_len = 0;
		int32_t status;
		uint32_t out_len;

		if (read_deadline(WORKER_FD, hdr, sizeof(hdr), NO_DEADLINE) < 0)
			return 0;
		if (hdr[2] > RASTER_SOURCE_MAX)
			return 1;
		src = malloc(hdr[2] ? hdr[2] : 1);
		if (!src ||
		    read_deadline(WORKER_FD, src, hdr[2], NO_DEADLINE) < 0)
			return 1;
		status = raster_render(src, hdr[2], hdr[1], hdr[0], &png,
				       &png_len);
		out_len = status < 0 ? 0 : (uint32_t)png_len;
		if (write_deadline(WORKER_FD, &status, sizeof(status),
				   NO_DEADLINE) < 0 ||
		    write_deadline(WORKER_FD, &out_len, sizeof(out_len),
				   NO_DEADLINE) < 0 ||
		    write_deadline(WORKER_FD, png, out_len, NO_DEADLINE) < 0)
			return 1;
	}
}

/* ---- pool side ---- */

static int worker_spawn(struct render_pool *p, struct worker *w)
{
	char *argv[] = { "iconfs", "render-worker", NULL };
	int sv[2], r;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return log_error_errno(-errno, "cannot create socket: %m");
	r = spawn_helper(p->exe, argv, (const int[][2]){ { sv[1], WORKER_FD } },
			 1, false, &w->pid);
	(void)close(sv[1]);
	if (r < 0) {
		(void)close(sv[0]);
		w->pid = 0;
		return log_error_errno(r, "cannot start render worker: %m");
	}
	w->fd = sv[0];
	return 0;
}

static void worker_kill(struct worker *w)
{
	if (w->pid > 0) {
		(void)kill(w->pid, SIGKILL);
		(void)waitpid(w->pid, NULL, 0);
	}
	if (w->fd >= 0)
		(void)close(w->fd);
	w->pid = 0;
	w->fd = -1;
}

int render_pool_new(unsigned workers, unsigned deadline_ms,
		    struct render_pool **ret)
{
	struct render_pool *p = calloc(1, sizeof(*p));
	pthread_condattr_t ca;
	int r;

	if (!p)
		return -ENOMEM;
	r = spawn_self_exe(p->exe, sizeof(p->exe));
	if (r < 0) {
		free(p);
		return log_error_errno(r, "cannot find own binary: %m");
	}
	p->n_workers = workers ? workers : 1;
	p->deadline_ms = deadline_ms ? deadline_ms : RENDER_DEADLINE_MS;
	p->workers = calloc(p->n_workers, sizeof(*p->workers));
	if (!p->workers) {
		free(p);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < p->n_workers; i++)
		p->workers[i].fd = -1;
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->free_cond, &ca);
	pthread_condattr_destroy(&ca);
	*ret = p;
	return 0;
}

struct render_pool *render_pool_free(struct render_pool *p)
{
	if (!p)
		return NULL;
	for (unsigned i = 0; i < p->n_workers; i++)
		worker_kill(&p->workers[i]);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->free_cond);
	free(p->workers);
	free(p);
	return NULL;
}

static int worker_exchange(struct worker *w, const void *data, size_t len,
			   enum icon_ext format, unsigned px,
			   long long deadline, void **ret_png, size_t *ret_len)
{
	uint32_t hdr[3] = { px, format, (uint32_t)len };
	_cleanup_free_ void *png = NULL;
	int32_t status;
	uint32_t out_len;
	int r;

	r = write_deadline(w->fd, hdr, sizeof(hdr), deadline);
	if (r >= 0)
		r = write_deadline(w->fd, data, len, deadline);
	if (r >= 0)
		r = read_deadline(w->fd, &status, sizeof(status), deadline);
	if (r >= 0)
		r = read_deadline(w->fd, &out_len, sizeof(out_len), deadline);
	if (r < 0)
		return r;
	if (status < 0)
		return status == -ENOMEM ? -ENOMEM : -EINVAL;
	if (out_len == 0 || out_len > RENDER_PNG_MAX)
		return -EPROTO;
	png = malloc(out_len);
	if (!png)
		return -ENOMEM;
	r = read_deadline(w->fd, png, out_len, deadline);
	if (r < 0)
		return r;
	*ret_png = TAKE_PTR(png);
	*ret_len = out_len;
	return 0;
}

/* Take a free worker, waiting for one until the deadline. */
static int worker_take(struct render_pool *p, long long deadline,
		       struct worker **ret)
{
	struct timespec until = { .tv_sec = deadline / 1000,
				  .tv_nsec = deadline % 1000 * 1000000 };
	int r = 0;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		for (unsigned i = 0; i < p->n_workers; i++)
			if (!p->workers[i].busy) {
				p->workers[i].busy = 1;
				*ret = &p->workers[i];
				pthread_mutex_unlock(&p->lock);
				return 0;
			}
		if (r == ETIMEDOUT) {
			pthread_mutex_unlock(&p->lock);
			return -ETIMEDOUT;
		}
		r = pthread_cond_timedwait(&p->free_cond, &p->lock, &until);
	}
}

int render_pool_render(struct render_pool *p, const void *data, size_t len,
		       enum icon_ext format, unsigned px, void **ret_png,
		       size_t *ret_len)
{
	long long deadline = now_ms() + p->deadline_ms;
	struct worker *w = NULL;
	int r;

	if (len > RASTER_SOURCE_MAX || px < 1 || px > RASTER_PX_MAX)
		return -EINVAL;
	r = worker_take(p, deadline, &w);
	if (r < 0)
		return r;

	/* The worker is ours alone now; spawn and talk without the lock. */
	r = w->pid > 0 ? 0 : worker_spawn(p, w);
	if (r >= 0)
		r = worker_exchange(w, data, len, format, px, deadline, ret_png,
				    ret_len);

	/* Bad input answered cleanly keeps the worker; anything else (crash,
	 * deadline, limits, garbage) replaces it. */
	if (r < 0 && r != -EINVAL) {
		log_warning_errno(r, "render worker %d failed: %m, replaced",
				  (int)w->pid);
		worker_kill(w);
	}

	pthread_mutex_lock(&p->lock);
	p->renders++;
	if (r < 0 && r != -EINVAL)
		p->restarts++;
	w->busy = 0;
	pthread_cond_signal(&p->free_cond);
	pthread_mutex_unlock(&p->lock);
	return r;
}

void render_pool_counters(struct render_pool *p, unsigned long long *renders,
			  unsigned long long *restarts)
{
	pthread_mutex_lock(&p->lock);
	*renders = p->renders;
	*restarts = p->restarts;
	pthread_mutex_unlock(&p->lock);
}
