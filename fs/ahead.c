/* Icons resolved ahead of their LOOKUP; see ahead.h. */
#include <pthread.h>
#include <stdatomic.h>

#include "ahead.h"

/* Resolved icons kept for their LOOKUP at most, about 1 MiB: a listing's
 * stats follow its prefetch closely, and a view listed without stats
 * leaves what it resolved behind until the index changes or the table is
 * full (then it starts again empty). */
#define AHEAD_MAX 4096

struct ahead {
	/* "theme/size/scale/name" → struct icon_content, all of one index
	 * generation; resolved_lock */
	pthread_mutex_t resolved_lock;
	GHashTable *resolved;
	uint64_t resolved_generation;
	atomic_ullong taken; /* ahead_take()s that found one */
};

static char *resolved_key(const char *theme, int size, int scale,
			  const char *name)
{
	return g_strdup_printf("%s/%d/%d/%s", theme, size, scale, name);
}

static void resolved_free(void *p)
{
	icon_content_clear(p);
	g_free(p);
}

void ahead_keep(struct ahead *p, const char *theme, int size, int scale,
		   const char *name, uint64_t generation,
		   struct icon_content *ic)
{
	struct icon_content *kept;

	if (!p)
		return;
	pthread_mutex_lock(&p->resolved_lock);
	if (p->resolved_generation != generation) {
		g_hash_table_remove_all(p->resolved);
		p->resolved_generation = generation;
	}
	if (g_hash_table_size(p->resolved) >= AHEAD_MAX)
		g_hash_table_remove_all(p->resolved);
	kept = g_new(struct icon_content, 1);
	*kept = *ic;
	*ic = (struct icon_content){ 0 };
	g_hash_table_replace(p->resolved,
			     resolved_key(theme, size, scale, name), kept);
	pthread_mutex_unlock(&p->resolved_lock);
}

bool ahead_take(struct ahead *p, const char *theme, int size, int scale,
		   const char *name, uint64_t generation,
		   struct icon_content *ret)
{
	g_autofree char *key = NULL, *stolen = NULL;
	struct icon_content *kept = NULL;

	if (!p)
		return false;
	key = resolved_key(theme, size, scale, name);
	pthread_mutex_lock(&p->resolved_lock);
	/* stolen: the table's key is ours to free */
	if (p->resolved_generation == generation &&
	    g_hash_table_steal_extended(p->resolved, key, (gpointer *)&stolen,
					(gpointer *)&kept)) {
		*ret = *kept;
		g_free(kept);
		atomic_fetch_add(&p->taken, 1);
	}
	pthread_mutex_unlock(&p->resolved_lock);
	return kept != NULL;
}


struct ahead *ahead_new(void)
{
	struct ahead *p = g_new0(struct ahead, 1);

	pthread_mutex_init(&p->resolved_lock, NULL);
	p->resolved = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					    resolved_free);
	return p;
}

struct ahead *ahead_free(struct ahead *p)
{
	if (!p)
		return NULL;
	g_hash_table_destroy(p->resolved);
	pthread_mutex_destroy(&p->resolved_lock);
	g_free(p);
	return NULL;
}

unsigned long long ahead_taken(struct ahead *p)
{
	return p ? atomic_load(&p->taken) : 0;
}
