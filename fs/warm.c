/* The working set; see warm.h. */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "db.h"
#include "helper.h"
#include "log.h"
#include "macro.h"
#include "stopper.h"
#include "subprocess.h"
#include "warm.h"

/* Notes are stored this often, and at the end. */
#define WARM_STORE_MS (60 * 1000)
#define WARM_BUSY_MS  2000

struct warm {
	char *db_path;
	char *mountpoint;
	pthread_t thread;	/* stores the notes */
	pthread_t reader_thread; /* reads ahead, then ends */
	bool reader_started;
	atomic_int reader; /* the read ahead's process while it runs, else -1 */
	atomic_ullong read_ahead;
	atomic_bool read_done;
	warm_prepare_fn prepare; /* on the read ahead's thread */
	void *userdata;
	struct stopper stop;

	char *start_theme; /* the default theme at the start: read ahead */

	pthread_mutex_t lock;
	const char *theme; /* the default theme now (interned); lock */
	GHashTable *noted; /* path → struct note; lock */
	GPtrArray *gone;   /* remembered paths that no longer exist; lock */
};

/* A file a program read this session. */
struct note {
	long long used;	   /* unix ms of its first read */
	const char *theme; /* the default theme then (interned) */
};

/* One path to the reader, its answer back (0 or -errno); -ECANCELED when
 * warm_stop() came first, -EPIPE when the reader is gone. */
static int reader_ask(struct warm *w, int in, FILE *out, const char *path)
{
	g_autofree char *line = g_strconcat(path, "\n", NULL);
	char answer[32];
	int r;

	if (strchr(path, '\n') || !helper_path_ok(path))
		return -EINVAL;
	if (write(in, line, strlen(line)) != (ssize_t)strlen(line))
		return -EPIPE;
	r = stopper_wait_fd(&w->stop, fileno(out));
	if (r == 0)
		return -ECANCELED;
	if (r < 0 || !fgets(answer, sizeof(answer), out))
		return -EPIPE;
	return -abs(atoi(answer));
}

/* The last sessions' files, read in the order they were first read, by a
 * process of its own: a thread of the daemon waiting on its own mount
 * would keep a killed daemon from ever exiting (the kernel waits for the
 * answer uninterruptibly, and only the dying process could give it). */
static void read_ahead(struct warm *w, sqlite3 *db)
{
	g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func(g_free);
	_cleanup_close_ int in = -1;
	FILE *out;
	int out_fd = -1;
	pid_t pid;

	{
		_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;

		if (db_query(db, &q,
			     "SELECT path FROM warm WHERE theme IS NULL OR "
			     "theme = ?1 ORDER BY used DESC LIMIT ?2",
			     "ti", w->start_theme, WARM_FILES) < 0)
			return;
		while (sqlite3_step(q) == SQLITE_ROW)
			g_ptr_array_add(paths, g_strdup(db_column_str(q, 0)));
	}
	if (paths->len == 0)
		return;
	{
		int r = helper_spawn(HELPER_READ_AHEAD, w->mountpoint, true,
				     &pid, &in, &out_fd);

		if (r < 0) {
			log_warning_errno(r, "cannot start the read ahead: %m");
			return;
		}
	}
	atomic_store(&w->reader, pid);
	out = fdopen(out_fd, "r");
	if (!out)
		(void)close(out_fd);
	for (unsigned i = paths->len; out && i-- > 0;) {
		int r;

		if (w->prepare)
			w->prepare(paths->pdata[i], w->userdata);
		r = reader_ask(w, in, out, paths->pdata[i]);

		/* -EAGAIN: not rendered (any more); a program will ask */
		if (r == -ENOENT || r == -EINVAL) {
			pthread_mutex_lock(&w->lock);
			g_ptr_array_add(w->gone, g_strdup(paths->pdata[i]));
			pthread_mutex_unlock(&w->lock);
		} else if (r == 0)
			atomic_fetch_add(&w->read_ahead, 1);
		else if (r == -ECANCELED || r == -EPIPE || r == -ENOTCONN ||
			 r == -ECONNABORTED)
			break; /* stopped, or unmounted meanwhile */
	}
	if (out)
		(void)fclose(out);
	(void)kill(pid, SIGKILL);
	(void)waitpid(pid, NULL, 0);
	/* its pid is free now: a program's thread that gets it next must
	 * not be taken for the read ahead (its reads would then render
	 * nothing, EAGAIN, and teach nothing: seen in the soak test) */
	atomic_store(&w->reader, -1);
	log_debug("read ahead %llu of %u files", atomic_load(&w->read_ahead),
		  paths->len);
}

/* Run a statement that returns no row, ready for the next bindings. */
static int step_reset(sqlite3_stmt *s)
{
	int rc = sqlite3_step(s);

	(void)sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* Store the notes, forget the files that are gone, and keep the
 * WARM_FILES most recent. Notes that cannot be stored are dropped: the
 * working set is an optimization, never worth a retry loop. */
static void store_notes(struct warm *w, sqlite3 *db)
{
	g_autoptr(GHashTable) notes = NULL;
	g_autoptr(GPtrArray) gone = NULL;
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *put = NULL, *drop = NULL,
						  *trim = NULL;
	GHashTableIter it;
	gpointer path, value;
	int r;

	pthread_mutex_lock(&w->lock);
	if (g_hash_table_size(w->noted) > 0 || w->gone->len > 0) {
		notes = g_steal_pointer(&w->noted);
		w->noted = g_hash_table_new_full(g_str_hash, g_str_equal,
						 g_free, g_free);
		gone = g_steal_pointer(&w->gone);
		w->gone = g_ptr_array_new_with_free_func(g_free);
	}
	pthread_mutex_unlock(&w->lock);
	if (!notes)
		return;

	r = db_exec(db, "BEGIN IMMEDIATE");
	if (r >= 0)
		r = db_prepare(db,
			       "INSERT INTO warm (path, used, theme) "
			       "VALUES (?1, ?2, ?3) ON CONFLICT (path) DO "
			       "UPDATE SET used = excluded.used, "
			       "theme = excluded.theme",
			       &put);
	if (r >= 0)
		r = db_prepare(db, "DELETE FROM warm WHERE path = ?1", &drop);
	if (r >= 0)
		r = db_prepare(
			db,
			"DELETE FROM warm WHERE path NOT IN (SELECT path "
			"FROM warm ORDER BY used DESC LIMIT ?1)",
			&trim);
	g_hash_table_iter_init(&it, notes);
	while (r >= 0 && g_hash_table_iter_next(&it, &path, &value)) {
		const struct note *n = value;

		sqlite3_bind_text(put, 1, path, -1, SQLITE_STATIC);
		sqlite3_bind_int64(put, 2, n->used);
		sqlite3_bind_text(put, 3, n->theme, -1, SQLITE_STATIC);
		r = step_reset(put);
	}
	for (unsigned i = 0; r >= 0 && i < gone->len; i++) {
		sqlite3_bind_text(drop, 1, gone->pdata[i], -1, SQLITE_STATIC);
		r = step_reset(drop);
	}
	if (r >= 0) {
		sqlite3_bind_int(trim, 1, WARM_FILES);
		r = step_reset(trim);
	}
	if (r >= 0)
		r = db_exec(db, "COMMIT");
	if (r < 0) {
		(void)db_exec(db, "ROLLBACK");
		log_warning_errno(r, "cannot store the working set: %m");
	}
	/* a burst of its own, once a minute at most: its log emptied (a
	 * session at rest keeps none on disk), the cache given back */
	(void)db_wal_trim(db, 0);
}

/* The read ahead's own thread, so that the notes are stored meanwhile; at
 * idle priority like its process (it ends with the read ahead, and never
 * needs to come back). */
static void *read_ahead_main(void *arg)
{
	struct warm *w = arg;
	_cleanup_(sqlite3_closep) sqlite3 *db = NULL;
	struct sched_param sp = { 0 };

	(void)pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);

	if (db_connect(w->db_path, DB_QUERY_ONLY, WARM_BUSY_MS, &db) >= 0)
		read_ahead(w, db);
	atomic_store(&w->read_done, true);
	return NULL;
}

static void *warm_main(void *arg)
{
	struct warm *w = arg;
	_cleanup_(sqlite3_closep) sqlite3 *db = NULL;
	int r;

	r = db_connect(w->db_path, 0, WARM_BUSY_MS, &db);
	if (r < 0) {
		log_warning_errno(r, "working set: cannot open the index: %m");
		return NULL;
	}
	while (!stopper_wait(&w->stop, WARM_STORE_MS))
		store_notes(w, db);
	store_notes(w, db);
	return NULL;
}

static void warm_free(struct warm *w)
{
	stopper_close(&w->stop);
	g_hash_table_destroy(w->noted);
	g_ptr_array_free(w->gone, TRUE);
	pthread_mutex_destroy(&w->lock);
	g_free(w->db_path);
	g_free(w->mountpoint);
	g_free(w->start_theme);
	g_free(w);
}

int warm_start(const char *db_path, const char *mountpoint, const char *theme,
	       warm_prepare_fn prepare, void *userdata, struct warm **ret)
{
	struct warm *w = g_new0(struct warm, 1);
	int r;

	w->start_theme = g_strdup(theme);
	w->theme = g_intern_string(theme);
	w->prepare = prepare;
	w->userdata = userdata;
	w->db_path = g_strdup(db_path);
	w->mountpoint = g_strdup(mountpoint);
	w->reader = -1;
	pthread_mutex_init(&w->lock, NULL);
	w->noted = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	w->gone = g_ptr_array_new_with_free_func(g_free);
	r = stopper_init(&w->stop);
	if (r >= 0)
		r = -pthread_create(&w->thread, NULL, warm_main, w);
	if (r < 0) {
		warm_free(w);
		return log_warning_errno(r, "cannot start the working set: %m");
	}
	w->reader_started =
		pthread_create(&w->reader_thread, NULL, read_ahead_main, w) == 0;
	if (!w->reader_started)
		atomic_store(&w->read_done, true);
	*ret = w;
	return 0;
}

void warm_stop(struct warm *w)
{
	if (!w)
		return;
	stopper_join(&w->stop, w->thread);
	if (w->reader_started)
		(void)pthread_join(w->reader_thread, NULL);
	warm_free(w);
}

bool warm_is_reader(struct warm *w, pid_t tid)
{
	return w && tid == atomic_load(&w->reader);
}

void warm_set_theme(struct warm *w, const char *theme)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->theme = g_intern_string(theme);
	pthread_mutex_unlock(&w->lock);
}

void warm_note(struct warm *w, const char *path)
{
	pthread_mutex_lock(&w->lock);
	if (g_hash_table_size(w->noted) < WARM_FILES &&
	    !g_hash_table_contains(w->noted, path)) {
		struct note *n = g_new(struct note, 1);

		*n = (struct note){ g_get_real_time() / 1000, w->theme };
		g_hash_table_insert(w->noted, g_strdup(path), n);
	}
	pthread_mutex_unlock(&w->lock);
}

unsigned long long warm_read_ahead(struct warm *w, bool *ret_done)
{
	*ret_done = !w || atomic_load(&w->read_done);
	return w ? atomic_load(&w->read_ahead) : 0;
}
