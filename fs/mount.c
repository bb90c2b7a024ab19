/* The mount's start-up, loop and shutdown; see fs.h. */
#include <errno.h>
#include <fuse_lowlevel.h>
#include <glib.h>
#include <malloc.h>
#include <pthread.h>
#include <sqlite3.h>

#include "content.h"
#include "daemon.h"
#include "desktop.h"
#include "fs.h"
#include "fs-private.h"
#include "log.h"
#include "mountpoint.h"
#include "resolved.h"
#include "prefetch.h"
#include "render.h"
#include "synth.h"
#include "tree.h"
#include "warm.h"
#include "watch.h"
#include "watchdog.h"

/* A mountpoint left by a crashed daemon is cleared; a live iconfs mount
 * or another filesystem is refused (a second daemon would stack on the
 * first and hide it). */
static int mountpoint_prepare(const char *mnt)
{
	int r = mountpoint_state(mnt);

	if (r == MOUNTPOINT_LIVE)
		return log_error_errno(-EBUSY, "'%s' is already an iconfs mount",
				       mnt);
	if (r == MOUNTPOINT_FOREIGN)
		return log_error_errno(-EBUSY,
				       "'%s' is already a mount point (another "
				       "filesystem, or another user's)",
				       mnt);
	if (r == MOUNTPOINT_DEAD && mountpoint_clear_dead(mnt) < 0)
		return -EIO;
	if (g_mkdir_with_parents(mnt, 0700) < 0)
		return log_error_errno(
			-errno, "cannot create mountpoint '%s': %m", mnt);
	return 0;
}

/* Before the read ahead reads `path`, on its idle thread: resolve the file
 * (stored renders only) so that the LOOKUP a normal-priority request
 * thread answers next takes the result instead of querying the index and
 * the blob table itself: the login's first programs, starting beside the
 * read ahead, keep the CPU. */
static void fs_warm_prepare(const char *path, void *userdata)
{
	struct fs *fs = userdata;
	struct request *x = fs_request(fs);

	if (!x)
		return;
	(void)tree_resolve_path(fs->tree, x, REQUEST_STORED_ONLY, path);
}

/* The desktop's theme setting changed: MNT/<N>/ follows. */
static void fs_theme_changed(const char *theme, enum desktop_source source,
			     void *userdata)
{
	struct fs *fs = userdata;
	g_autoptr(GArray) invals =
		g_array_new(FALSE, FALSE, sizeof(struct tree_inval));

	log_info("icon theme is now '%s' (%s)", theme,
		 desktop_source_name(source));
	tree_set_default_theme(fs->tree, theme, desktop_source_name(source),
			       invals);
	content_ask_theme(fs->content, theme);
	warm_set_theme(fs->warm, theme);
	watch_invalidate(fs->watch, invals);
	tree_inval_clear(invals);
}

/* What serves requests, before the session: content, the resolved cache,
 * synth, the tree, the listing prefetch and the key of the per-thread
 * request context. On failure what was made is left for fs_mount to free. */
static int fs_state_new(struct fs *fs, const struct fs_options *o)
{
	int r;

	r = content_new(o->db, o->shared_db, o->basedirs, o->workers,
			RENDER_DEADLINE_MS, o->budget, &fs->content);
	if (r < 0)
		return r;
	content_set_stat_tier(fs->content, true);
	content_ask_theme(fs->content, o->theme);
	fs->resolved = resolved_new();
	r = synth_new(&fs->generation, &fs->synth);
	if (r >= 0)
		r = tree_new(o->theme, o->theme_source ? o->theme_source : "",
			     o->rules, &fs->tree);
	if (r >= 0)
		r = prefetch_new(o->db, o->rules, o->workers, fs->content,
				 fs->resolved, &fs->prefetch);
	if (r < 0)
		return r;
	return -pthread_key_create(&fs->request_key, fs_request_release);
}

/* The FUSE session of `fs` with its signal handlers, mounted on `mnt`;
 * on failure the caller destroys what *ret_se holds. */
static int fs_session_mount(struct fs *fs, const char *mnt,
			    struct fuse_args *args, struct fuse_session **ret_se)
{
	struct fuse_session *se;

	se = fuse_session_new(args, &fs_ops, sizeof(fs_ops), fs);
	*ret_se = fs->se = se;
	if (!se)
		return log_error_errno(-EIO, "cannot create FUSE session");
	if (fuse_set_signal_handlers(se) < 0)
		return log_error_errno(-EIO, "cannot set signal handlers");
	if (fuse_session_mount(se, mnt) < 0) {
		int r = log_error_errno(-EIO, "cannot mount on '%s'", mnt);

		fuse_remove_signal_handlers(se);
		return r;
	}
	return 0;
}

/* Serve the mounted session until it ends: the watchers (the index, the
 * desktop's setting, systemd's watchdog) and the working set's read
 * ahead, the loop; then what started stops (it must not outlive the tree
 * it uses). */
static int fs_serve(struct fs *fs, const struct fs_options *o)
{
	const char *mnt = o->mountpoint;
	struct fuse_loop_config *cfg = NULL;
	struct watch *watch = o->watch;
	struct watchdog *dog = NULL;
	struct desktop_watch *desktop = NULL;
	int r;

	r = watch_start(watch, fs->se, fs->tree, fs->content, fs->synth,
			&fs->generation, o->db, o->basedirs);
	fs->watch = watch;
	/* before the desktop's watcher, whose theme changes it follows */
	if (r >= 0)
		(void)warm_start(o->db, mnt, o->theme, fs_warm_prepare, fs,
				 &fs->warm);
	if (r >= 0 && !o->theme_pinned)
		r = desktop_watch_start(fs_theme_changed, fs, &desktop);
	if (r >= 0)
		r = watchdog_start(mnt, &dog);
	if (r >= 0) {
		cfg = fuse_loop_cfg_create();
		fuse_loop_cfg_set_max_threads(cfg, FS_THREADS_MAX);
		fuse_loop_cfg_set_idle_threads(cfg, FS_THREADS_IDLE);
		r = fuse_session_loop_mt(fs->se, cfg) < 0 ? -EIO : 0;
		fuse_loop_cfg_destroy(cfg);
	}
	watchdog_stop(dog);
	desktop_watch_stop(desktop);
	fs->watch = NULL;
	watch_stop(watch);
	return r;
}

/* Mounted: ready said (the background command returns, systemd starts
 * the session), then what must precede the first answer and what serves,
 * while the first requests wait in the kernel; then served until the
 * session ends, and unmounted. A login's programs start at READY=1, and
 * most take longer to ask the mount than the refresh takes (a relogin's:
 * 25-30 ms of stamps and watches for the Debian themes), which then no
 * longer delays them. */
static int fs_mounted(struct fs *fs, const struct fs_options *o,
		      int *ready_fd)
{
	int r;

	daemon_ready(ready_fd, 0);
	watchdog_ready();
	if (o->prepare)
		o->prepare(o->prepare_data);
	r = fs_state_new(fs, o);
	if (r >= 0)
		r = fs_serve(fs, o);
	fuse_session_unmount(fs->se);
	fuse_remove_signal_handlers(fs->se);
	return r;
}

int fs_mount(const struct fs_options *o)
{
	const char *mnt = o->mountpoint;
	/* auto_unmount where fusermount3 honours it; how a dead mount goes
	 * away for a user is told in mountpoint.h. No default_permissions:
	 * the mount is its user's alone, read-only and noexec, every file
	 * 0444 and every directory 0555, so the kernel's checks would refuse
	 * nothing, and they would ask for the attributes of a file access(2)
	 * names, which a LOOKUP leaves unsized (REQUEST_DEFER). Without them,
	 * and without an access handler, access(2) costs the LOOKUP alone
	 * (the kernel stops asking after the first ENOSYS); noexec answers
	 * X_OK, and refuses to run any file, without the daemon. */
	char *argv[] = { "iconfs", "-o",
			 "ro,noexec,fsname=iconfs,subtype=iconfs,"
			 "auto_unmount",
			 NULL };
	struct fuse_args args = FUSE_ARGS_INIT(3, argv);
	struct fuse_session *se = NULL;
	struct fs fs = { .db_path = o->db,
			 .budget = o->budget,
			 .pool_lock = PTHREAD_MUTEX_INITIALIZER };
	_cleanup_close_ int ready_fd = o->ready_fd, guard_fd = -1;
	int r;

	/* A session-long daemon whose requests hop between threads: one
	 * malloc arena per thread would fragment (the Krita lesson). One for
	 * all: a node made on one thread is freed on another, and a second
	 * arena kept the holes it left (bench M3: RssAnon wandered 17.3-20.7
	 * MiB with two, 15.5-16.2 with one, for the same 14-16 MiB in use).
	 * Each thread's tcache still takes most small blocks without the
	 * arena's lock. */
	(void)mallopt(M_ARENA_MAX, 1);

	r = mountpoint_prepare(mnt);
	if (r < 0)
		return r;
	r = fs_session_mount(&fs, mnt, &args, &se);
	if (r >= 0) {
		log_info("serving theme '%s' on '%s' (%s rules)", o->theme, mnt,
			 lookup_rules_name(o->rules));
		/* held until this process ends, however it ends */
		r = mountpoint_guard_start(mnt, &guard_fd);
		if (r < 0)
			log_warning_errno(r, "cannot start the mount's guard: "
					  "%m (a crash would leave the mount "
					  "dead)");
		r = fs_mounted(&fs, o, &ready_fd);
	}
	if (se)
		fuse_session_destroy(se);
	/* after the session: a read ahead may wait for an answer until its
	 * connection is gone */
	warm_stop(fs.warm);
	/* every thread that took a request has ended */
	fs_request_pool_free(&fs);
	fuse_opt_free_args(&args);
	prefetch_free(fs.prefetch);
	resolved_free(fs.resolved);
	tree_free(fs.tree);
	synth_free(fs.synth);
	content_free(fs.content);
	return r;
}
