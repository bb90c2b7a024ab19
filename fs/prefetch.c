/* Rendering listed views ahead of their readers; see prefetch.h. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>

#include "db.h"
#include "index.h"
#include "log.h"
#include "lookup.h"
#include "resolved.h"
#include "prefetch.h"
#include "view.h"

/* Jobs waiting at most; a listing beyond that is not prefetched. */
#define PREFETCH_JOBS_MAX 4
/* Views remembered as prefetched (per index generation). */
#define PREFETCH_SEEN_MAX 1024
/* Listed views remembered for a stat that would start their prefetch. */
#define PREFETCH_LISTED_MAX 256

/* A listed view, by its directory's inode. */
struct listed {
	char *theme;
	int size, scale;
	GPtrArray *names;
	bool skip_symbolic;
	uint64_t generation;
	bool statted; /* its prefetch started */
};

struct job {
	char *theme;
	int size, scale;
	GPtrArray *names;
	bool skip_symbolic;
	uint64_t generation;
	atomic_uint next; /* next name to take */
	unsigned active;  /* threads working on it; prefetch.lock */
};

struct prefetch {
	char *db_path;
	enum lookup_rules rules;
	struct content *content;
	pthread_t *threads;
	unsigned n_threads;

	pthread_mutex_t lock;
	pthread_cond_t wake;
	GQueue jobs;	  /* struct job; lock */
	GHashTable *seen; /* "gen/theme/size/scale"; lock */
	GHashTable *listed; /* dir inode (gint64 *) → struct listed; lock */
	bool stop;	  /* lock */
	struct resolved *resolved; /* where resolved icons are kept */
};

static void listed_free(void *p)
{
	struct listed *l = p;

	g_ptr_array_unref(l->names);
	g_free(l->theme);
	g_free(l);
}

static void job_free(struct job *j)
{
	g_ptr_array_unref(j->names);
	g_free(j->theme);
	g_free(j);
}

/* The job to work on, or NULL to stop; with lock held. */
static struct job *job_take(struct prefetch *p)
{
	for (;;) {
		struct job *j;

		while (!p->stop && g_queue_is_empty(&p->jobs))
			pthread_cond_wait(&p->wake, &p->lock);
		if (p->stop)
			return NULL;
		j = g_queue_peek_head(&p->jobs);
		if (atomic_load(&j->next) < j->names->len) {
			j->active++;
			return j;
		}
		/* exhausted: the last one out frees it */
		g_queue_pop_head(&p->jobs);
		if (j->active == 0)
			job_free(j);
	}
}

static void job_run(struct prefetch *p, struct job *j, struct blob_reader *b,
		    struct lookup *l)
{
	/* a size view's (the ones that skip symbolic names), as tree.c
	 * makes them */
	unsigned flags = p->rules == LOOKUP_RULES_QT && j->skip_symbolic
				 ? CONTENT_SMALLER_AS_IS
				 : 0;
	unsigned i;

	while ((i = atomic_fetch_add(&j->next, 1)) < j->names->len) {
		const char *name = j->names->pdata[i];
		struct icon_content ic = { 0 };
		g_autofree char *src = NULL;
		int ext;

		if (j->skip_symbolic && view_is_symbolic(name))
			continue;
		if (lookup_icon(l, j->theme, name, j->size, j->scale, &src,
				&ext) == 0 &&
		    content_resolve(p->content, b, src, ext,
				    (unsigned)(j->size * j->scale), flags,
				    &ic) == 0)
			resolved_keep(p->resolved, j->theme, j->size, j->scale, name,
				   j->generation, &ic);
		icon_content_clear(&ic);
		pthread_mutex_lock(&p->lock);
		if (p->stop)
			atomic_store(&j->next, j->names->len);
		pthread_mutex_unlock(&p->lock);
	}
}

static void *prefetch_main(void *arg)
{
	struct prefetch *p = arg;
	_cleanup_(sqlite3_closep) sqlite3 *db = NULL;
	_cleanup_(lookup_freep) struct lookup *l = NULL;
	_cleanup_(blob_reader_freep) struct blob_reader *b = NULL;
	uint64_t generation = 0;
	bool ready = false;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct job *j = job_take(p);

		if (!j)
			break;
		pthread_mutex_unlock(&p->lock);
		/* connected at the first job: most sessions list no view, and
		 * an idle connection holds its schema and statements */
		if (!db)
			ready = index_connect(p->db_path, DB_QUERY_ONLY, 1000,
					      &db) >= 0 &&
				lookup_new(db, p->rules, &l) >= 0 &&
				content_reader_new(p->content, db, &b) >= 0;
		if (ready && j->generation != generation) {
			lookup_flush(l);
			generation = j->generation;
		}
		if (ready)
			job_run(p, j, b, l);
		pthread_mutex_lock(&p->lock);
		/* a job off the queue is freed by its last worker */
		if (--j->active == 0 && g_queue_find(&p->jobs, j) == NULL)
			job_free(j);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int prefetch_new(const char *db_path, enum lookup_rules rules, unsigned threads,
		 struct content *content, struct resolved *resolved,
		 struct prefetch **ret)
{
	struct prefetch *p = g_new0(struct prefetch, 1);

	p->db_path = g_strdup(db_path);
	p->rules = rules;
	p->content = content;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->wake, NULL);
	g_queue_init(&p->jobs);
	p->seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	p->listed = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free,
					  listed_free);
	p->resolved = resolved;
	p->threads = g_new0(pthread_t, threads ? threads : 1);
	for (unsigned i = 0; i < (threads ? threads : 1); i++) {
		if (pthread_create(&p->threads[i], NULL, prefetch_main, p) != 0)
			break;
		p->n_threads++;
	}
	*ret = p;
	return 0;
}

struct prefetch *prefetch_free(struct prefetch *p)
{
	if (!p)
		return NULL;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < p->n_threads; i++)
		(void)pthread_join(p->threads[i], NULL);
	g_queue_clear_full(&p->jobs, (GDestroyNotify)job_free);
	g_hash_table_destroy(p->seen);
	g_hash_table_destroy(p->listed);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->wake);
	g_free(p->threads);
	g_free(p->db_path);
	g_free(p);
	return NULL;
}

/* Queue the prefetch of a listed view, once per index generation; with
 * lock held. */
static void queue_view(struct prefetch *p, const struct listed *l)
{
	g_autofree char *key = g_strdup_printf("%" G_GUINT64_FORMAT "/%s/%d/%d",
					       l->generation, l->theme,
					       l->size, l->scale);
	struct job *j;

	if (g_hash_table_contains(p->seen, key) ||
	    g_queue_get_length(&p->jobs) >= PREFETCH_JOBS_MAX)
		return;
	if (g_hash_table_size(p->seen) >= PREFETCH_SEEN_MAX)
		g_hash_table_remove_all(p->seen);
	g_hash_table_add(p->seen, g_steal_pointer(&key));
	j = g_new0(struct job, 1);
	j->theme = g_strdup(l->theme);
	j->size = l->size;
	j->scale = l->scale;
	j->names = g_ptr_array_ref(l->names);
	j->skip_symbolic = l->skip_symbolic;
	j->generation = l->generation;
	g_queue_push_tail(&p->jobs, j);
	pthread_cond_broadcast(&p->wake);
}

void prefetch_listed(struct prefetch *p, uint64_t dir, const char *theme,
		     int size, int scale, GPtrArray *names, bool skip_symbolic,
		     uint64_t generation)
{
	gint64 key = (gint64)dir;
	struct listed *l;

	pthread_mutex_lock(&p->lock);
	l = g_hash_table_lookup(p->listed, &key);
	/* listed again (the kernel reads a listing anew): as it was */
	if (!l || l->generation != generation) {
		if (g_hash_table_size(p->listed) >= PREFETCH_LISTED_MAX)
			g_hash_table_remove_all(p->listed);
		l = g_new0(struct listed, 1);
		l->theme = g_strdup(theme);
		l->size = size;
		l->scale = scale;
		l->names = g_ptr_array_ref(names);
		l->skip_symbolic = skip_symbolic;
		l->generation = generation;
		g_hash_table_replace(p->listed, g_memdup2(&key, sizeof(key)),
				     l);
	}
	pthread_mutex_unlock(&p->lock);
}

bool prefetch_stat(struct prefetch *p, uint64_t dir)
{
	gint64 key = (gint64)dir;
	struct listed *l;

	if (!p)
		return false;
	pthread_mutex_lock(&p->lock);
	l = g_hash_table_lookup(p->listed, &key);
	if (l && !l->statted) {
		l->statted = true;
		queue_view(p, l);
	}
	pthread_mutex_unlock(&p->lock);
	return l != NULL;
}

bool prefetch_statted(struct prefetch *p, uint64_t dir)
{
	gint64 key = (gint64)dir;
	struct listed *l;
	bool r;

	if (!p)
		return false;
	pthread_mutex_lock(&p->lock);
	l = g_hash_table_lookup(p->listed, &key);
	r = l && l->statted;
	pthread_mutex_unlock(&p->lock);
	return r;
}
