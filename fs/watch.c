/* The live-update thread; see watch.h. */
#include <errno.h>
#include <glib.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "blob.h"
#include "content.h"
#include "db.h"
#include "heap.h"
#include "log.h"
#include "stopper.h"
#include "time-util.h"
#include "index.h"
#include "netfs.h"
#include "watch.h"

/* Quiet time that ends a burst, and the longest a burst is held back. */
#define WATCH_QUIET_MS	   150
#define WATCH_MAX_DELAY_MS 1000
/* Stamp check period without inotify, and as a safety net with it. */
#define WATCH_POLL_MS	1000
#define WATCH_SAFETY_MS 30000
/* ... when a base directory is on a network filesystem, where a change
 * made on another host sends no event here */
#define WATCH_NETWORK_MS 10000
/* How often the node table is held to its size. */
#define WATCH_EVICT_MS 2000
/* Free heap bytes kept at each eviction pass (heap_trim). */
#define WATCH_HEAP_SLACK (256u * 1024)
/* Time given to storing synthesized files per quiet tick. */
#define WATCH_SYNTH_MS 500
/* The watcher writes the index: it may wait for the lock held by another
 * process (an `iconfs index` by hand) as long as it takes. */
#define WATCH_BUSY_MS 60000

/* A directory's entries created, removed or renamed (how dpkg and every
 * package manager change a theme), and the directory itself going. */
#define WATCH_ENTRY_EVENTS                                     \
	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | \
	 IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
/* ... and its files rewritten in place or touched */
#define WATCH_EVENTS (WATCH_ENTRY_EVENTS | IN_CLOSE_WRITE | IN_ATTRIB)

/* A base directory, and whether this user can write it. */
struct watch_base {
	char *path;
	bool writable;
};

struct watch {
	struct fuse_session *se;
	struct tree *tree;
	struct content *content;
	struct synth *synth;
	struct generation *gen;
	char *db_path;
	char **basedirs;
	sqlite3 *db;
	int ifd;      /* inotify, -1 when unavailable */
	bool polling; /* watches ran out: stamp checks every second */
	struct scan_watcher scanner; /* each directory a refresh looks at */
	bool armed;	/* the mount's own refresh watched them (watch_new) */
	GArray *bases;	/* struct watch_base, as refreshes met them */
	long long check_ms; /* the period of the stamp check beside inotify */
	struct stopper stop;
	pthread_t thread;
	GHashTable *touched; /* icon names seen in events since the refresh */
	bool synth_due;	     /* synthesized files to store when quiet */
	bool overflow;
	atomic_bool ready; /* the start-up (watch_settle) is done */
	atomic_ullong invalidations; /* sent to the kernel */
	atomic_ullong refreshes;
};

/* A base directory that does not exist yet is watched through its nearest
 * existing ancestor, so that its creation is noticed. */
static void watch_missing_base(struct watch *w, const char *base)
{
	g_autofree char *p = g_strdup(base);
	char *slash;

	while ((slash = strrchr(p, '/')) && slash != p) {
		*slash = '\0';
		if (inotify_add_watch(w->ifd, p,
				      IN_CREATE | IN_MOVED_TO | IN_ONLYDIR) >=
		    0)
			return;
	}
}

/* Whether this user can write below the base directory `dir` is in
 * (access(2) once per base directory; a directory under none: its own). */
static bool watch_writable(struct watch *w, const char *dir, bool base)
{
	struct watch_base b;

	for (guint i = 0; i < w->bases->len; i++) {
		struct watch_base *k = &g_array_index(w->bases, struct watch_base, i);
		size_t n = strlen(k->path);

		if (strncmp(dir, k->path, n) == 0 &&
		    (dir[n] == '/' || dir[n] == '\0'))
			return k->writable;
	}
	b = (struct watch_base){ g_strdup(dir), access(dir, W_OK) == 0 };
	if (!base) {
		g_free(b.path);
		return b.writable;
	}
	g_array_append_val(w->bases, b);
	return b.writable;
}

/* Watch `dir`, a directory a refresh is about to look at (scan_watcher):
 * from then on the watcher hears of any change the refresh does not see.
 * A watch for the files' events makes the kernel walk every cached entry
 * of the directory as it is added: with the system's themes in the dentry
 * cache, that walk was half the daemon's start-up at a relogin (perf:
 * 40-60 ms of inotify_add_watch). Under a base directory this user cannot
 * write, files change as packages change them, by a rename the entry
 * events see; a file rewritten there in place (cp over it) is seen once
 * the kernel forgets its node, at the latest at the next mount. */
static void watch_dir(const char *dir, bool base, void *userdata)
{
	struct watch *w = userdata;
	uint32_t mask;

	if (w->ifd < 0 || w->polling)
		return;
	w->armed = true;
	mask = watch_writable(w, dir, base) ? WATCH_EVENTS : WATCH_ENTRY_EVENTS;
	if (inotify_add_watch(w->ifd, dir, mask) >= 0)
		return;
	if (errno == ENOENT && base)
		watch_missing_base(w, dir);
	else if (errno == ENOSPC) {
		log_warning("out of inotify watches, checking stamps every "
			    "second instead");
		w->polling = true;
	}
}

/* Read pending events; remember the icon names they touch. */
static void watch_read(struct watch *w)
{
	char buf[64 * 1024]
		__attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	while ((n = read(w->ifd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *ev = (struct inotify_event *)p;

			if (ev->mask & IN_Q_OVERFLOW)
				w->overflow = true;
			if (ev->len > 0) {
				char *dot = strrchr(ev->name, '.');
				if (dot && dot != ev->name &&
				    icon_ext_from_name(dot + 1) >= 0)
					g_hash_table_add(
						w->touched,
						g_strndup(ev->name,
							  dot - ev->name));
			}
			p += sizeof(*ev) + ev->len;
		}
	}
}

unsigned long long watch_invalidations(struct watch *w)
{
	return w ? atomic_load(&w->invalidations) : 0;
}

unsigned long long watch_refreshes(struct watch *w)
{
	return w ? atomic_load(&w->refreshes) : 0;
}

void watch_invalidate(struct watch *w, GArray *invals)
{
	struct fuse_session *se = w->se;

	atomic_fetch_add(&w->invalidations, invals->len);
	for (unsigned i = 0; i < invals->len; i++) {
		struct tree_inval *v =
			&g_array_index(invals, struct tree_inval, i);

		if (v->ino)
			(void)fuse_lowlevel_notify_inval_inode(se, v->ino, 0,
							       0);
		else
			(void)fuse_lowlevel_notify_inval_entry(
				se, v->parent, v->name, strlen(v->name));
	}
}

struct stale_check {
	GHashTable *names; /* NULL: every source */
	GPtrArray *stale;
};

static void stale_check_one(const struct blob_key *k, void *userdata)
{
	struct stale_check *sc = userdata;
	const char *base = strrchr(k->source, '/');
	const char *dot = base ? strrchr(base, '.') : NULL;
	struct stat st;

	if (sc->names && base && dot) {
		g_autofree char *stem = g_strndup(base + 1, dot - base - 1);
		if (!g_hash_table_contains(sc->names, stem))
			return;
	}
	if (stat(k->source, &st) < 0 || (long long)st.st_ino != k->ino ||
	    (long long)st.st_size != k->size ||
	    timespec_ns(st.st_mtim) != k->mtime_ns)
		g_ptr_array_add(sc->stale, g_strdup(k->source));
}

/* Renders whose source changed or vanished go; others stay. Only sources
 * named by the change are looked at (every one when `names` is NULL): a
 * changed or removed file is always named, by its listing or its event.
 * The blob writer deletes them. */
static void watch_drop_renders(struct watch *w, GHashTable *names)
{
	g_autoptr(GPtrArray) stale = g_ptr_array_new_with_free_func(g_free);
	struct stale_check sc = { names, stale };

	(void)blob_foreach_source(w->db, stale_check_one, &sc);
	for (guint i = 0; i < stale->len; i++)
		content_drop_source(w->content, stale->pdata[i]);
}

static void watch_evict(struct watch *w)
{
	g_autoptr(GArray) invals =
		g_array_new(FALSE, FALSE, sizeof(struct tree_inval));

	tree_collect_evictions(w->tree, TREE_NODES_BYTES, invals);
	watch_invalidate(w, invals);
	tree_inval_clear(invals);
	content_trim_workers(w->content);
	/* what the nodes, renders and listings freed, back to the kernel */
	(void)heap_trim(WATCH_HEAP_SLACK);
}

/* The synthesized files of the default theme, those its toolkit always
 * loads and every theme in use, stored in the index ahead of the next
 * reader (this mount's after a change, the next mount's at login): each
 * costs a lookup per name to build, which no request should wait for. */
static void watch_store_synth(struct watch *w)
{
	g_autofree char *theme = tree_default_theme(w->tree);
	g_auto(GStrv) themes = synth_session_themes(theme, tree_rules(w->tree));
	_cleanup_(lookup_freep) struct lookup *l = NULL;
	int r;

	if (lookup_new(w->db, tree_rules(w->tree), &l) < 0)
		return;
	r = synth_store(w->synth, l, w->db, (const char *const *)themes,
			now_ms() + WATCH_SYNTH_MS);
	if (r < 0)
		log_debug_errno(r, "cannot store synthesized files: %m");
	w->synth_due = r != 0;
	/* the files' pages (a large theme's cache is a megabyte), and the
	 * log of what was stored or dropped */
	(void)db_wal_trim(w->db, 0);
}

static void watch_refresh(struct watch *w)
{
	g_autoptr(GHashTable) names =
		g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autoptr(GArray) invals =
		g_array_new(FALSE, FALSE, sizeof(struct tree_inval));
	struct scan_changes changes = { .names = names };
	struct scan_stats stats;
	struct timespec now;
	bool all;

	if (scan_refresh(w->db, w->basedirs, 0, &w->scanner, &stats,
			 &changes) < 0)
		return;
	atomic_fetch_add(&w->refreshes, 1);
	/* In-place rewrites change no directory: the events name them. */
	{
		GHashTableIter it;
		char *n;

		g_hash_table_iter_init(&it, w->touched);
		while (g_hash_table_iter_next(&it, (void **)&n, NULL))
			g_hash_table_add(names, g_strdup(n));
		g_hash_table_remove_all(w->touched);
	}
	all = changes.themes || w->overflow;
	w->overflow = false;
	if (!stats.changed && g_hash_table_size(names) == 0)
		return;
	if (all)
		(void)index_all_names(w->db, names);

	clock_gettime(CLOCK_REALTIME, &now);
	generation_bump(w->gen);
	synth_invalidate(w->synth);
	tree_collect_invalidations(w->tree, names, all, now, invals);
	watch_invalidate(w, invals);
	log_debug("refresh: %u directories read, %u names changed%s, "
		  "%u invalidations",
		  stats.dirs_read, g_hash_table_size(names),
		  all ? " (themes)" : "", invals->len);
	tree_inval_clear(invals);
	watch_drop_renders(w, all ? NULL : names);
	/* stored later, when the changes have settled */
	w->synth_due = true;
}

static void *settle_main(void *arg)
{
	struct watch *w = arg;

	/* Unless the mount's own refresh watched each directory as it went
	 * (watch_new), a refresh of its own does, and catches what changed
	 * since the mount's; then prepare what the first toolkit will read. */
	if (!w->armed)
		watch_refresh(w);
	watch_store_synth(w);
	return NULL;
}

/* settle_main at idle priority, on a thread of its own: glibc refuses
 * SCHED_IDLE in a thread's attributes (EINVAL, and the thread would run
 * at normal priority), a running thread may lower its own. */
static void *settle_main_idle(void *arg)
{
	struct sched_param sp = { 0 };

	(void)pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
	return settle_main(arg);
}

/* The start-up work (a refresh when the mount's did not watch, the
 * synthesized files), runs at idle
 * priority while the watch thread waits for it: it lands just as the
 * login's programs start, and they come first. The watch thread cannot
 * lower its own priority and raise it again (RLIMIT_NICE), hence a thread
 * of its own; it borrows the watch thread's state and connection, which
 * nothing else touches meanwhile. Events that arrive meanwhile wait in the
 * inotify queue. */
static void watch_settle(struct watch *w)
{
	pthread_t t;

	if (pthread_create(&t, NULL, settle_main_idle, w) == 0)
		(void)pthread_join(t, NULL);
	else
		(void)settle_main(w);
}

static void *watch_main(void *arg)
{
	struct watch *w = arg;
	long long first = -1, last = 0, next_check = now_ms() + w->check_ms;
	long long next_evict = now_ms() + WATCH_EVICT_MS;

	watch_settle(w);
	atomic_store(&w->ready, true);
	for (;;) {
		struct pollfd pfd[3] = {
			{ .fd = stopper_fd(&w->stop), .events = POLLIN },
			{ .fd = w->ifd, .events = POLLIN },
			{ .fd = tree_pressure_fd(w->tree), .events = POLLIN },
		};
		long long now = now_ms(), timeout;
		int r;

		if (first >= 0)
			timeout = MIN(last + WATCH_QUIET_MS,
				      first + WATCH_MAX_DELAY_MS) -
				  now;
		else
			timeout = MIN(w->polling || w->ifd < 0
					      ? now + WATCH_POLL_MS
					      : next_check,
				      next_evict) -
				  now;
		/* (poll skips a negative fd: no inotify, no eventfd) */
		r = poll(pfd, 3, (int)MAX(timeout, 0));
		if (r < 0 && errno != EINTR)
			break;
		if (pfd[0].revents)
			break;
		now = now_ms();
		if (pfd[2].revents)
			watch_evict(w);
		if (now >= next_evict) {
			watch_evict(w);
			if (first < 0 && (w->synth_due ||
					  synth_unstored(w->synth)))
				watch_store_synth(w);
			next_evict = now + WATCH_EVICT_MS;
		}
		if (r > 0 && pfd[1].revents) {
			watch_read(w);
			if (first < 0)
				first = now;
			last = now;
			/* a steady stream of changes still gets refreshes */
			if (now < first + WATCH_MAX_DELAY_MS)
				continue;
		}
		/* quiet long enough, held back long enough, or a periodic
		 * stamp check */
		if (first >= 0 || now >= next_check ||
		    ((w->polling || w->ifd < 0) && r == 0)) {
			watch_refresh(w);
			first = -1;
			next_check = now_ms() + w->check_ms;
		}
	}
	return NULL;
}

struct watch *watch_new(void)
{
	struct watch *w = g_new0(struct watch, 1);

	w->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->ifd < 0)
		log_warning_errno(-errno, "no inotify (%m), checking stamps "
					  "every second");
	w->scanner = (struct scan_watcher){ watch_dir, w };
	w->bases = g_array_new(FALSE, FALSE, sizeof(struct watch_base));
	w->touched =
		g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	w->stop = (struct stopper){ { -1, -1 } };
	return w;
}

const struct scan_watcher *watch_scanner(struct watch *w)
{
	return &w->scanner;
}

int watch_start(struct watch *w, struct fuse_session *se, struct tree *tree,
		struct content *content, struct synth *synth,
		struct generation *gen, const char *db_path,
		char *const *basedirs)
{
	int r;

	w->se = se;
	w->tree = tree;
	w->content = content;
	w->synth = synth;
	w->gen = gen;
	w->db_path = g_strdup(db_path);
	w->basedirs = g_strdupv((char **)basedirs);
	w->check_ms = WATCH_SAFETY_MS;
	for (char *const *b = basedirs; *b; b++) {
		_cleanup_free_ char *type = netfs_type_of(*b);

		if (type) {
			log_info("base directory '%s' is on a network "
				 "filesystem (%s): its stamps are checked "
				 "every %d s",
				 *b, type, WATCH_NETWORK_MS / 1000);
			w->check_ms = WATCH_NETWORK_MS;
		}
	}
	r = index_connect(db_path, 0, WATCH_BUSY_MS, &w->db);
	if (r >= 0)
		r = stopper_init(&w->stop);
	if (r >= 0)
		r = -pthread_create(&w->thread, NULL, watch_main, w);
	if (r < 0) {
		w->thread = 0;
		return log_error_errno(r, "cannot start watching: %m");
	}
	return 0;
}

void watch_stop(struct watch *w)
{
	if (w && w->thread) {
		stopper_join(&w->stop, w->thread);
		w->thread = 0;
	}
}

void watch_free(struct watch *w)
{
	if (!w)
		return;
	watch_stop(w);
	if (w->ifd >= 0)
		(void)close(w->ifd);
	stopper_close(&w->stop);
	(void)sqlite3_close_v2(w->db);
	g_hash_table_destroy(w->touched);
	for (guint i = 0; i < w->bases->len; i++)
		g_free(g_array_index(w->bases, struct watch_base, i).path);
	g_array_free(w->bases, TRUE);
	g_strfreev(w->basedirs);
	g_free(w->db_path);
	g_free(w);
}

bool watch_ready(struct watch *w)
{
	return w && atomic_load(&w->ready);
}
