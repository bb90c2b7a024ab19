/* The blob writer thread; see store.h. */
#include <errno.h>
#include <glib.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "db.h"
#include "log.h"
#include "store.h"
#include "time-util.h"

/* Queued render bytes beyond which renders are served but not cached. */
#define STORE_QUEUE_MAX (32u * 1024 * 1024)
/* One transaction takes at most this many operations... */
#define STORE_BATCH_MAX 256
/* ...and evicts at most this many rows, so that none runs long. */
#define STORE_EVICT_ROWS 512
/* How long the writer waits for the index's write lock per attempt, and
 * between attempts when another process holds it. */
#define STORE_BUSY_MS  250
#define STORE_RETRY_MS 200
/* How long store_free() waits to write what is queued. */
#define STORE_DRAIN_MS 3000
/* The index's log is trimmed once a burst of writes leaves it past this
 * (db_wal_trim), and emptied once no write came for STORE_QUIET_MS (a
 * session at rest keeps no log on disk). */
#define STORE_WAL_MAX  (256 * 1024)
#define STORE_QUIET_MS 2000

enum op_kind {
	OP_PUT,
	OP_TOUCH,
	OP_DROP,
};

struct op {
	enum op_kind kind;
	struct blob_key key; /* key.source points to source */
	char *source;
	int status;
	/* cleared by the first read while queued (store_get_pending), which
	 * may race with the writer applying it: hence atomic, and a touch */
	atomic_bool stat_only;
	void *data;
	size_t len;
};

struct store {
	char *db_path;
	char *shared; /* the shared layer, or NULL */
	long long budget;
	sqlite3 *db;	    /* the writer thread's */
	atomic_llong total; /* bytes stored; written by the writer thread */
	pthread_t thread;
	atomic_ullong errors;

	pthread_mutex_t lock;
	pthread_cond_t wake;   /* work queued or stop; lock */
	pthread_cond_t synced; /* a batch was written; lock */
	GQueue queue;	       /* struct op, oldest first; lock */
	/* "px:source" → the newest queued or in-flight put of that key;
	 * lock. The ops are owned by the queue or the writer's batch. */
	GHashTable *pending;
	size_t pending_bytes;	  /* lock */
	uint64_t queued, written; /* operations; lock */
	bool stop;		  /* lock */
};


static void op_free(struct op *op)
{
	if (!op)
		return;
	g_free(op->source);
	free(op->data);
	g_free(op);
}

static struct op *op_new(enum op_kind kind, const char *source, unsigned px)
{
	struct op *op = g_new0(struct op, 1);

	op->kind = kind;
	op->source = g_strdup(source);
	op->key.source = op->source;
	op->key.px = px;
	return op;
}

static void store_enqueue(struct store *s, struct op *op)
{
	pthread_mutex_lock(&s->lock);
	if (op->kind == OP_PUT) {
		g_hash_table_replace(s->pending,
				     blob_key_text(&op->key), op);
		s->pending_bytes += op->len;
	}
	g_queue_push_tail(&s->queue, op);
	s->queued++;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
}

void store_put(struct store *s, const struct blob_key *k, int status,
	       const void *png, size_t len, bool stat_only)
{
	struct op *op;
	bool full;

	pthread_mutex_lock(&s->lock);
	full = s->pending_bytes + len > STORE_QUEUE_MAX;
	pthread_mutex_unlock(&s->lock);
	if (full) {
		atomic_fetch_add(&s->errors, 1);
		return;
	}
	op = op_new(OP_PUT, k->source, k->px);
	op->key.ino = k->ino;
	op->key.size = k->size;
	op->key.mtime_ns = k->mtime_ns;
	op->key.hash = k->hash;
	op->status = status;
	op->stat_only = stat_only;
	if (status == 0) {
		op->data = malloc(len ? len : 1);
		if (!op->data) {
			op_free(op);
			atomic_fetch_add(&s->errors, 1);
			return;
		}
		memcpy(op->data, png, len);
		op->len = len;
	}
	store_enqueue(s, op);
}

int store_get_pending(struct store *s, const struct blob_key *k,
		      void **ret_data, size_t *ret_len)
{
	g_autofree char *key = blob_key_text(k);
	bool lifted = false;
	struct op *op;
	int r = -ENOENT;

	pthread_mutex_lock(&s->lock);
	op = g_hash_table_lookup(s->pending, key);
	if (op && op->key.ino == k->ino && op->key.size == k->size &&
	    op->key.mtime_ns == k->mtime_ns) {
		r = op->status ? -EIO : 0;
		if (r == 0 && ret_data) {
			*ret_data = malloc(op->len ? op->len : 1);
			if (*ret_data)
				memcpy(*ret_data, op->data, op->len);
			else
				r = -ENOMEM;
		}
		if (r == 0)
			*ret_len = op->len;
		if (r == 0 && ret_data)
			lifted = atomic_exchange(&op->stat_only, false);
	}
	pthread_mutex_unlock(&s->lock);
	/* the writer may have applied the lower tier already: a use after
	 * it, in queue order, lifts it either way */
	if (lifted)
		store_touch(s, k->source, k->px);
	return r;
}

void store_touch(struct store *s, const char *source, unsigned px)
{
	store_enqueue(s, op_new(OP_TOUCH, source, px));
}

void store_drop_source(struct store *s, const char *source)
{
	store_enqueue(s, op_new(OP_DROP, source, 0));
}

static int store_apply(struct store *s, struct op *op, long long *delta)
{
	long long d = 0;
	int r;

	switch (op->kind) {
	case OP_PUT:
		r = blob_put(s->db, &op->key, op->status, op->data, op->len,
			     &d);
		if (r >= 0 && atomic_load(&op->stat_only) && op->status == 0)
			r = blob_touch(s->db, op->source, op->key.px,
				       time(NULL) - BLOB_STAT_TIER);
		break;
	case OP_TOUCH:
		r = blob_touch(s->db, op->source, op->key.px, time(NULL));
		break;
	case OP_DROP:
		d = blob_drop_source(s->db, op->source);
		r = d < 0 ? (int)d : 0;
		d = d < 0 ? 0 : -d;
		break;
	default:
		r = -EINVAL;
	}
	*delta += d;
	return r;
}

/* One transaction: the operations, then eviction down to 90% of the
 * budget when the total is over it. The running total follows only a
 * committed transaction. */
static int store_write(struct store *s, struct op **ops, unsigned n)
{
	long long delta = 0;
	int r;

	r = db_exec(s->db, "BEGIN IMMEDIATE");
	if (r < 0)
		return r;
	for (unsigned i = 0; i < n && r >= 0; i++)
		r = store_apply(s, ops[i], &delta);
	if (r >= 0 && s->total + delta > s->budget) {
		long long freed =
			blob_evict(s->db, s->total + delta - s->budget / 10 * 9,
				   STORE_EVICT_ROWS);
		if (freed < 0)
			r = (int)freed;
		else
			delta -= freed;
	}
	if (r >= 0)
		r = db_exec(s->db, "COMMIT");
	if (r < 0) {
		(void)db_exec(s->db, "ROLLBACK");
		return r;
	}
	s->total += delta;
	return 0;
}

static void store_give_up(struct store *s, struct op **ops, unsigned n, int r)
{
	unsigned long long puts = 0, before;

	for (unsigned i = 0; i < n; i++)
		puts += ops[i]->kind == OP_PUT;
	before = atomic_fetch_add(&s->errors, puts);
	/* a full disk fails every batch: say so at each power of two */
	if (puts && g_bit_storage(before) != g_bit_storage(before + puts))
		log_warning_errno(r,
				  "cannot store rendered icons: %m, serving "
				  "without caching (%llu so far)",
				  before + puts);
}

/* Wait for a wake-up (s->lock held) at most `ms`. */
static void store_nap(struct store *s, unsigned ms)
{
	long long end = now_ms() + ms;
	struct timespec until = { .tv_sec = end / 1000,
				  .tv_nsec = end % 1000 * 1000000 };

	(void)pthread_cond_timedwait(&s->wake, &s->lock, &until);
}

static void *store_main(void *arg)
{
	struct store *s = arg;
	struct op *ops[STORE_BATCH_MAX];
	long long stop_at = -1;
	/* what becomes of the index's log (db_wal_trim) */
	enum { LOG_KEPT, LOG_AFTER_BURST, LOG_WHEN_QUIET } log = LOG_KEPT;

	if (s->shared) {
		int dropped = blob_drop_below(s->db, s->shared);

		if (dropped > 0) {
			log_info("%d renders are in the shared layer now: "
				 "read from there",
				 dropped);
			db_shrink(s->db);
			log = LOG_AFTER_BURST; /* its log too */
		}
	}
	s->total = blob_total(s->db);
	pthread_mutex_lock(&s->lock);
	for (;;) {
		unsigned n = 0;
		int r;

		while (g_queue_is_empty(&s->queue) && !s->stop) {
			bool trimmed;

			if (log == LOG_KEPT) {
				pthread_cond_wait(&s->wake, &s->lock);
				continue;
			}
			/* a burst is over: the log bounded now, and emptied
			 * when the index is quiet (tried again in a while
			 * when a reader was using it) */
			if (log == LOG_WHEN_QUIET) {
				store_nap(s, STORE_QUIET_MS);
				if (!g_queue_is_empty(&s->queue) || s->stop)
					continue;
			}
			pthread_mutex_unlock(&s->lock);
			trimmed = db_wal_trim(s->db, log == LOG_AFTER_BURST
							     ? STORE_WAL_MAX
							     : 0);
			pthread_mutex_lock(&s->lock);
			log = trimmed && log == LOG_WHEN_QUIET ? LOG_KEPT
							       : LOG_WHEN_QUIET;
		}
		if (g_queue_is_empty(&s->queue))
			break;
		if (s->stop && stop_at < 0)
			stop_at = now_ms() + STORE_DRAIN_MS;
		while (n < STORE_BATCH_MAX && !g_queue_is_empty(&s->queue))
			ops[n++] = g_queue_pop_head(&s->queue);
		pthread_mutex_unlock(&s->lock);

		r = store_write(s, ops, n);
		if ((r == -EBUSY || r == -EINTR) &&
		    (stop_at < 0 || now_ms() < stop_at)) {
			/* Another process holds the write lock: keep serving
			 * from memory and try again. */
			pthread_mutex_lock(&s->lock);
			for (unsigned i = n; i > 0; i--)
				g_queue_push_head(&s->queue, ops[i - 1]);
			pthread_mutex_unlock(&s->lock);
			(void)nanosleep(
				&(struct timespec){ .tv_nsec = STORE_RETRY_MS *
							       1000000L },
				NULL);
			pthread_mutex_lock(&s->lock);
			continue;
		}
		if (r < 0)
			store_give_up(s, ops, n, r);

		pthread_mutex_lock(&s->lock);
		for (unsigned i = 0; i < n; i++) {
			struct op *op = ops[i];

			if (op->kind == OP_PUT) {
				g_autofree char *key =
					blob_key_text(&op->key);

				if (g_hash_table_lookup(s->pending, key) == op)
					g_hash_table_remove(s->pending, key);
				s->pending_bytes -= op->len;
			}
			op_free(op);
		}
		s->written += n;
		pthread_cond_broadcast(&s->synced);
		log = LOG_AFTER_BURST;
	}
	/* stopping: whatever could not be written is dropped */
	s->written = s->queued;
	pthread_cond_broadcast(&s->synced);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

int store_new(const char *db_path, const char *shared, long long budget,
	      struct store **ret)
{
	struct store *s = g_new0(struct store, 1);
	pthread_condattr_t ca;
	int r;

	s->db_path = g_strdup(db_path);
	s->shared = g_strdup(shared);
	s->budget = budget;
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* now_ms()'s */
	pthread_cond_init(&s->wake, &ca);
	pthread_cond_init(&s->synced, &ca);
	pthread_condattr_destroy(&ca);
	g_queue_init(&s->queue);
	s->pending =
		g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	r = db_connect(db_path, 0, STORE_BUSY_MS, &s->db);
	if (r >= 0)
		r = -pthread_create(&s->thread, NULL, store_main, s);
	if (r < 0) {
		store_free(s);
		return log_error_errno(r, "cannot start the blob writer: %m");
	}
	*ret = s;
	return 0;
}

struct store *store_free(struct store *s)
{
	if (!s)
		return NULL;
	if (s->thread) {
		pthread_mutex_lock(&s->lock);
		s->stop = true;
		pthread_cond_signal(&s->wake);
		pthread_mutex_unlock(&s->lock);
		(void)pthread_join(s->thread, NULL);
	}
	g_queue_clear_full(&s->queue, (GDestroyNotify)op_free);
	g_hash_table_destroy(s->pending);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->wake);
	pthread_cond_destroy(&s->synced);
	(void)sqlite3_close_v2(s->db);
	g_free(s->db_path);
	g_free(s->shared);
	g_free(s);
	return NULL;
}

int store_sync(struct store *s, unsigned timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;
	struct timespec until = { .tv_sec = deadline / 1000,
				  .tv_nsec = deadline % 1000 * 1000000 };
	uint64_t target;
	int r = 0;

	pthread_mutex_lock(&s->lock);
	target = s->queued;
	while (s->written < target && r == 0)
		r = pthread_cond_timedwait(&s->synced, &s->lock, &until);
	pthread_mutex_unlock(&s->lock);
	return r == 0 ? 0 : -ETIMEDOUT;
}

long long store_total(struct store *s)
{
	return atomic_load(&s->total);
}

unsigned long long store_errors(struct store *s)
{
	return atomic_load(&s->errors);
}
