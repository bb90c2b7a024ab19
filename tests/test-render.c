/* The render pool (render.h) with the real worker program (from
 * $ICONFS_RENDER_WORKER, as meson test sets it) and with stand-ins (shell
 * scripts on the worker's socket, descriptor 3): a render is a PNG of the
 * asked size; an idle worker is stopped, and started again when needed;
 * bad input is a verdict that keeps the worker; a worker that hangs, dies
 * or answers nonsense fails that request only and is replaced; arguments
 * out of range never reach a worker. */
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "render.h"
#include "test.h"

static const char svg[] = "<svg xmlns=\"http://www.w3.org/2000/svg\" "
			  "width=\"16\" height=\"16\"><rect width=\"16\" "
			  "height=\"16\" fill=\"red\"/></svg>";

static unsigned long long renders_of(struct render_pool *p)
{
	unsigned long long renders, restarts;

	render_pool_counters(p, &renders, &restarts);
	return renders;
}

static unsigned long long restarts_of(struct render_pool *p)
{
	unsigned long long renders, restarts;

	render_pool_counters(p, &renders, &restarts);
	return restarts;
}

/* Render svg at `px`: 0 when the PNG is px×px, else -errno or -1. */
static int render_svg(struct render_pool *p, unsigned px)
{
	void *png = NULL;
	size_t len = 0;
	unsigned w = 0, h = 0;
	int r = render_pool_render(p, svg, strlen(svg), ICON_EXT_SVG, px, &png,
				   &len);

	if (r == 0)
		r = raster_png_size(png, len, &w, &h) == 0 && w == px && h == px
			    ? 0
			    : -1;
	free(png);
	return r;
}

TEST(renders)
{
	struct render_pool *p = NULL;

	ASSERT_EQ_INT(render_pool_new(1, 0, &p), 0);
	ASSERT_EQ_INT(render_svg(p, 24), 0);
	ASSERT_EQ_INT(render_svg(p, 96), 0);
	ASSERT_EQ_INT(renders_of(p), 2);
	ASSERT_EQ_INT(restarts_of(p), 0);
	render_pool_free(p);
}

/* Workers idle long enough are stopped, and started again for the next
 * render; a worker that just rendered stays. */
TEST(idle_workers)
{
	struct render_pool *p = NULL;

	ASSERT_EQ_INT(render_pool_new(2, 0, &p), 0);
	ASSERT_EQ_INT(render_pool_trim(p, 0), 0);
	ASSERT_EQ_INT(render_svg(p, 24), 0);
	ASSERT_EQ_INT(render_pool_trim(p, 60000), 1);
	ASSERT_EQ_INT(render_pool_trim(p, 0), 0);
	ASSERT_EQ_INT(render_svg(p, 32), 0);
	ASSERT_EQ_INT(render_pool_trim(p, 60000), 1);
	ASSERT_EQ_INT(renders_of(p), 2);
	ASSERT_EQ_INT(restarts_of(p), 0);
	render_pool_free(p);
}

/* The minor page faults of this process's one child so far, or -1. */
static long long child_minflt(void)
{
	g_autoptr(GDir) proc = g_dir_open("/proc", 0, NULL);
	const char *name;
	long long found = -1;

	while (proc && (name = g_dir_read_name(proc))) {
		g_autofree char *path = g_strconcat("/proc/", name, "/stat",
						    NULL);
		g_autofree char *stat = NULL;
		const char *rest;
		int ppid;
		long long minflt;

		if (!g_ascii_isdigit(*name) ||
		    !g_file_get_contents(path, &stat, NULL, NULL) ||
		    !(rest = strrchr(stat, ')')) ||
		    sscanf(rest, ") %*c %d %*d %*d %*d %*d %*u %lld", &ppid,
			   &minflt) != 2 ||
		    ppid != getpid())
			continue;
		if (found >= 0)
			return -1;
		found = minflt;
	}
	return found;
}

/* A worker keeps what a render freed for the next one: glibc by default
 * gives the heap's top back after each render and the next one faults it
 * in again (each unmapping an IPI to every CPU the worker ran on). */
TEST(worker_keeps_its_heap)
{
	struct render_pool *p = NULL;
	long long before, after;

	ASSERT_EQ_INT(render_pool_new(1, 0, &p), 0);
	for (unsigned i = 0; i < 4; i++)
		ASSERT_EQ_INT(render_svg(p, 256), 0);
	before = child_minflt();
	ASSERT_TRUE(before > 0);
	for (unsigned i = 0; i < 20; i++)
		ASSERT_EQ_INT(render_svg(p, 256), 0);
	after = child_minflt();
#if defined(__SANITIZE_ADDRESS__)
	/* the worker of this build allocates with ASan's malloc, which
	 * glibc's tunables do not reach */
	printf("# ASan's malloc: %lld page faults, not judged\n",
	       after - before);
#else
	/* a 256 px surface alone is 64 pages: 20 renders that gave the heap
	 * back faulted at least 1,280 times */
	ASSERT_TRUE(after - before < 100);
#endif
	render_pool_free(p);
}

TEST(verdicts)
{
	struct render_pool *p = NULL;
	void *png = NULL;
	size_t len = 0;

	ASSERT_EQ_INT(render_pool_new(1, 0, &p), 0);
	/* a source that cannot be decoded: the verdict, the worker kept */
	ASSERT_EQ_INT(
		render_pool_render(p, "<svg", 4, ICON_EXT_SVG, 16, &png, &len),
		-EINVAL);
	ASSERT_EQ_INT(restarts_of(p), 0);
	ASSERT_EQ_INT(render_svg(p, 16), 0);
	ASSERT_EQ_INT(renders_of(p), 2);
	/* out of range: refused before any worker sees it */
	ASSERT_EQ_INT(render_pool_render(p, svg, strlen(svg), ICON_EXT_SVG, 0,
					 &png, &len),
		      -EINVAL);
	ASSERT_EQ_INT(render_pool_render(p, svg, strlen(svg), ICON_EXT_SVG,
					 RASTER_PX_MAX + 1, &png, &len),
		      -EINVAL);
	ASSERT_EQ_INT(render_pool_render(p, svg, RASTER_SOURCE_MAX + 1,
					 ICON_EXT_SVG, 16, &png, &len),
		      -EINVAL);
	ASSERT_EQ_INT(renders_of(p), 2);
	ASSERT_EQ_INT(restarts_of(p), 0);
	ASSERT_TRUE(png == NULL);
	render_pool_free(p);
}

/* A pool of one stand-in worker running `script`, with a deadline of
 * 300 ms; the real worker again for the pools made after it. */
static int stand_in(const char *script, char **ret_dir,
		    struct render_pool **ret)
{
	g_autofree char *path = NULL, *text = NULL;
	const char *real = g_getenv("ICONFS_RENDER_WORKER");
	g_autofree char *saved = g_strdup(real);
	int r;

	*ret_dir = g_dir_make_tmp("iconfs-test-XXXXXX", NULL);
	path = g_build_filename(*ret_dir, "worker", NULL);
	text = g_strdup_printf("#!/bin/sh\n%s\n", script);
	if (!g_file_set_contents(path, text, -1, NULL) || chmod(path, 0755) < 0)
		return -1;
	g_setenv("ICONFS_RENDER_WORKER", path, TRUE);
	r = render_pool_new(1, 300, ret);
	if (saved)
		g_setenv("ICONFS_RENDER_WORKER", saved, TRUE);
	else
		g_unsetenv("ICONFS_RENDER_WORKER");
	(void)g_unlink(path); /* held open by the pool */
	(void)g_rmdir(*ret_dir);
	return r;
}

/* The result of one render by a stand-in running `script`, and its
 * pool's restarts after it (in *ret_restarts). */
static int by_stand_in(const char *script, unsigned long long *ret_restarts)
{
	g_autofree char *dir = NULL;
	struct render_pool *p = NULL;
	void *png = NULL;
	size_t len = 0;
	int r;

	if (stand_in(script, &dir, &p) < 0)
		return -1000;
	r = render_pool_render(p, svg, strlen(svg), ICON_EXT_SVG, 16, &png,
			       &len);
	*ret_restarts = restarts_of(p);
	free(png);
	render_pool_free(p);
	return r;
}

TEST(bad_workers)
{
	unsigned long long restarts = 0;
	int r;

	/* never answers: the deadline */
	ASSERT_EQ_INT(by_stand_in("exec sleep 10", &restarts), -ETIMEDOUT);
	ASSERT_EQ_INT(restarts, 1);
	/* dies at once: the end of the stream, or a reset where it left
	 * the request unread */
	r = by_stand_in("exit 0", &restarts);
	ASSERT_TRUE(r == -EPIPE || r == -ECONNRESET);
	ASSERT_EQ_INT(restarts, 1);
	/* status 0 and a length past RENDER_PNG_MAX */
	ASSERT_EQ_INT(by_stand_in("printf '\\000\\000\\000\\000\\377\\377\\377"
				  "\\377' >&3; exec sleep 10",
				  &restarts),
		      -EPROTO);
	ASSERT_EQ_INT(restarts, 1);
	/* out of memory is said as such (try again later), not a verdict */
	ASSERT_EQ_INT(by_stand_in("printf '\\364\\377\\377\\377\\000\\000\\000"
				  "\\000' >&3; exec sleep 10",
				  &restarts),
		      -ENOMEM);
	/* any other failure status: the verdict on the source */
	ASSERT_EQ_INT(by_stand_in("printf '\\373\\377\\377\\377\\000\\000\\000"
				  "\\000' >&3; exec sleep 10",
				  &restarts),
		      -EINVAL);
	ASSERT_EQ_INT(restarts, 0);
}

TEST(no_worker_program)
{
	struct render_pool *p = NULL;
	g_autofree char *saved = g_strdup(g_getenv("ICONFS_RENDER_WORKER"));

	g_setenv("ICONFS_RENDER_WORKER", "/no/such/worker", TRUE);
	ASSERT_EQ_INT(render_pool_new(1, 0, &p), -ENOENT);
	g_setenv("ICONFS_RENDER_WORKER", saved ? saved : "", TRUE);
	ASSERT_TRUE(p == NULL);
}

TEST_MAIN(TEST_CASE(renders), TEST_CASE(idle_workers),
	  TEST_CASE(worker_keeps_its_heap), TEST_CASE(verdicts),
	  TEST_CASE(bad_workers), TEST_CASE(no_worker_program))
