/* The render worker pool; see render.h. */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "time-util.h"
#include "render.h"
#include "subprocess.h"
#include "wire.h"

struct worker {
	pid_t pid;
	int fd;
	int busy;
	long long used_ms; /* the end of its last render */
};

struct render_pool {
	pthread_mutex_t lock;
	pthread_cond_t free_cond;
	struct worker *workers; /* guarded by lock */
	unsigned n_workers;
	unsigned deadline_ms;
	int program_fd; /* the worker program, held open */
	unsigned long long renders, restarts; /* guarded by lock */
};

static int worker_spawn(struct render_pool *p, struct worker *w)
{
	char *argv[] = { RENDER_WORKER, NULL };
	char program[64];
	int sv[2], r;

	/* the held file, named through this process (the child closes its
	 * descriptors before it runs it) */
	snprintf(program, sizeof(program), "/proc/%d/fd/%d", (int)getpid(),
		 p->program_fd);

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return log_error_errno(-errno, "cannot create socket: %m");
	r = spawn_helper(program, argv, (const int[][2]){ { sv[1], WIRE_FD } },
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

/* The worker program: $ICONFS_RENDER_WORKER where set (a test program
 * elsewhere in a build tree), else RENDER_WORKER beside this program (a
 * build tree), else the installed one. It is held open and run through its
 * descriptor, so that an upgrade that replaces the file while the mount
 * runs cannot pair this daemon with a worker of another version. A
 * descriptor, or -errno. */
static int program_open(void)
{
	const char *env = getenv("ICONFS_RENDER_WORKER");
	char path[PATH_MAX];
	int fd, r;

	if (env && *env) {
		fd = open(env, O_RDONLY | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	r = spawn_program_path(RENDER_WORKER, path, sizeof(path));
	if (r < 0)
		return r;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int render_pool_new(unsigned workers, unsigned deadline_ms,
		    struct render_pool **ret)
{
	struct render_pool *p = calloc(1, sizeof(*p));
	pthread_condattr_t ca;

	if (!p)
		return -ENOMEM;
	p->program_fd = program_open();
	if (p->program_fd < 0) {
		int r = p->program_fd;

		free(p);
		return log_error_errno(r,
				       "cannot find the render worker '%s': %m",
				       ICONFS_LIBEXECDIR "/" RENDER_WORKER);
	}
	p->n_workers = workers ? workers : 1;
	p->deadline_ms = deadline_ms ? deadline_ms : RENDER_DEADLINE_MS;
	p->workers = calloc(p->n_workers, sizeof(*p->workers));
	if (!p->workers) {
		(void)close(p->program_fd);
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
	(void)close(p->program_fd);
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

	r = wire_write(w->fd, hdr, sizeof(hdr), deadline);
	if (r >= 0)
		r = wire_write(w->fd, data, len, deadline);
	if (r >= 0)
		r = wire_read(w->fd, &status, sizeof(status), deadline);
	if (r >= 0)
		r = wire_read(w->fd, &out_len, sizeof(out_len), deadline);
	if (r < 0)
		return r;
	if (status < 0)
		return status == -ENOMEM ? -ENOMEM : -EINVAL;
	if (out_len == 0 || out_len > RENDER_PNG_MAX)
		return -EPROTO;
	png = malloc(out_len);
	if (!png)
		return -ENOMEM;
	r = wire_read(w->fd, png, out_len, deadline);
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

	if (len > RASTER_SOURCE_MAX || raster_px(px) < 1 ||
	    raster_px(px) > RASTER_PX_MAX)
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
	w->used_ms = now_ms();
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

unsigned render_pool_trim(struct render_pool *p, long long idle_ms)
{
	long long now = now_ms();
	unsigned running = 0;

	for (unsigned i = 0; i < p->n_workers; i++) {
		struct worker *w = &p->workers[i], idle = { .fd = -1 };

		/* taken out of the pool under the lock, stopped outside it */
		pthread_mutex_lock(&p->lock);
		if (!w->busy && w->pid > 0 && now - w->used_ms >= idle_ms) {
			idle = *w;
			w->pid = 0;
			w->fd = -1;
		}
		/* (a busy worker's fields are its renderer's) */
		running += w->busy || w->pid > 0;
		pthread_mutex_unlock(&p->lock);
		worker_kill(&idle);
	}
	return running;
}
