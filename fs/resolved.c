/* The resolved cache; see resolved.h. */
#include <pthread.h>
#include <stdatomic.h>

#include "resolved.h"

/* Resolved icons kept for their LOOKUP at most, about 1 MiB: a listing's
 * stats follow its prefetch closely, and a view listed without stats
 * leaves what it resolved behind until the index changes or the table is
 * full (then it starts again empty). */
#define RESOLVED_MAX 4096

struct resolved {
	/* "theme/size/scale/name" → struct icon_content, all of one index
	 * generation; lock */
	pthread_mutex_t lock;
	GHashTable *table;
	uint64_t generation;
	atomic_ullong taken; /* resolved_take()s that found one */
};

static char *resolved_key(const char *theme, int size, int scale,
			  const char *name)
{
	return g_strdup_printf("%s/%d/%d/%s", theme, size, scale, name);
}

static void kept_free(void *p)
{
	icon_content_clear(p);
	g_free(p);
}

void resolved_keep(struct resolved *p, const char *theme, int size, int scale,
		   const char *name, uint64_t generation,
		   struct icon_content *ic)
{
	struct icon_content *kept;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	if (p->generation != generation) {
		g_hash_table_remove_all(p->table);
		p->generation = generation;
	}
	if (g_hash_table_size(p->table) >= RESOLVED_MAX)
		g_hash_table_remove_all(p->table);
	kept = g_new(struct icon_content, 1);
	*kept = *ic;
	*ic = (struct icon_content){ 0 };
	g_hash_table_replace(p->table,
			     resolved_key(theme, size, scale, name), kept);
	pthread_mutex_unlock(&p->lock);
}

bool resolved_take(struct resolved *p, const char *theme, int size, int scale,
		   const char *name, uint64_t generation,
		   struct icon_content *ret)
{
	g_autofree char *key = NULL, *stolen = NULL;
	struct icon_content *kept = NULL;

	if (!p)
		return false;
	key = resolved_key(theme, size, scale, name);
	pthread_mutex_lock(&p->lock);
	/* stolen: the table's key is ours to free */
	if (p->generation == generation &&
	    g_hash_table_steal_extended(p->table, key, (gpointer *)&stolen,
					(gpointer *)&kept)) {
		*ret = *kept;
		g_free(kept);
		atomic_fetch_add(&p->taken, 1);
	}
	pthread_mutex_unlock(&p->lock);
	return kept != NULL;
}


struct resolved *resolved_new(void)
{
	struct resolved *p = g_new0(struct resolved, 1);

	pthread_mutex_init(&p->lock, NULL);
	p->table = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					    kept_free);
	return p;
}

struct resolved *resolved_free(struct resolved *p)
{
	if (!p)
		return NULL;
	g_hash_table_destroy(p->table);
	pthread_mutex_destroy(&p->lock);
	g_free(p);
	return NULL;
}

unsigned long long resolved_taken(struct resolved *p)
{
	return p ? atomic_load(&p->taken) : 0;
}
