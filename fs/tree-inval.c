/* What the kernel holds of the tree, and what it must forget: the entries
 * and misses a change of the index touches, the flat views at a switch of
 * the default theme, and the least recently used nodes past the table's
 * bound; see tree.h. */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/eventfd.h>

#include "macro.h"
#include "tree.h"
#include "tree-private.h"

void tree_held(struct tree *t, unsigned *ret_nodes, unsigned *ret_negatives,
	       size_t *ret_bytes)
{
	pthread_mutex_lock(&t->lock);
	*ret_nodes = g_hash_table_size(t->by_ino);
	*ret_bytes = t->bytes;
	*ret_negatives = g_hash_table_size(t->negatives);
	pthread_mutex_unlock(&t->lock);
}

static void inval_add(GArray *out, uint64_t ino, uint64_t parent,
		      const char *name)
{
	struct tree_inval v = { ino, parent, g_strdup(name) };
	g_array_append_val(out, v);
}

/* The icon (or theme) name an entry stands for: "x.png" and "x.svg" stand
 * for x, any other entry for itself. */
static bool entry_named(const char *entry, GHashTable *names)
{
	const char *dot = strrchr(entry, '.');
	g_autofree char *stem = NULL;

	if (dot && (streq(dot, ".png") || streq(dot, ".svg")))
		stem = g_strndup(entry, dot - entry);
	return g_hash_table_contains(names, stem ? stem : entry);
}

void tree_collect_invalidations(struct tree *t, GHashTable *names, bool all,
				struct timespec when, GArray *out)
{
	GHashTableIter it;
	const char *neg;
	struct node *n;

	/* Only what the kernel holds: the nodes it looked up and the misses
	 * it was told to cache; O(nodes + misses), whatever the index holds. */
	pthread_mutex_lock(&t->lock);
	t->refreshed = when;
	g_hash_table_iter_init(&it, t->by_key);
	while (g_hash_table_iter_next(&it, NULL, (void **)&n)) {
		/* Directories (attributes, cached listings) and the synthetic
		 * index.theme and cache follow every change; icon files when
		 * their name changed. */
		bool synthetic = n->kind == TREE_INDEX_THEME ||
				 n->kind == TREE_ICON_CACHE;
		bool named = n->name && g_hash_table_contains(names, n->name);

		if (all || tree_kind_is_dir(n->kind) || synthetic || named)
			inval_add(out, n->ino, 0, NULL);
		if (all || synthetic || named)
			inval_add(out, 0, n->parent, n->entry);
	}
	g_hash_table_iter_init(&it, t->negatives);
	while (g_hash_table_iter_next(&it, (void **)&neg, NULL)) {
		const char *entry = strchr(neg, '/') + 1;

		if (!all && !entry_named(entry, names))
			continue;
		inval_add(out, 0, g_ascii_strtoull(neg, NULL, 10), entry);
		g_hash_table_iter_remove(&it);
	}
	inval_add(out, TREE_ROOT_INO, 0, NULL);
	pthread_mutex_unlock(&t->lock);
}

void tree_set_default_theme(struct tree *t, const char *theme,
			    const char *source, GArray *out)
{
	g_autoptr(GHashTable) flat =
		g_hash_table_new(g_int64_hash, g_int64_equal);
	GHashTableIter it;
	const char *neg;
	struct node *n;

	pthread_mutex_lock(&t->theme_lock);
	g_free(t->default_theme);
	g_free(t->default_source);
	t->default_theme = g_strdup(theme);
	t->default_source = g_strdup(source);
	pthread_mutex_unlock(&t->theme_lock);

	/* The flat views the kernel holds go, with all it holds below them
	 * (their nodes are keyed by the old theme); the next lookup makes
	 * the new theme's. */
	pthread_mutex_lock(&t->lock);
	g_hash_table_iter_init(&it, t->by_key);
	while (g_hash_table_iter_next(&it, NULL, (void **)&n)) {
		if (n->kind != TREE_FLATDIR)
			continue;
		g_hash_table_add(flat, &n->ino);
		inval_add(out, n->ino, 0, NULL);
		inval_add(out, 0, n->parent, n->entry);
	}
	g_hash_table_iter_init(&it, t->negatives);
	while (g_hash_table_iter_next(&it, (void **)&neg, NULL)) {
		uint64_t parent = g_ascii_strtoull(neg, NULL, 10);

		if (!g_hash_table_contains(flat, &parent))
			continue;
		inval_add(out, 0, parent, strchr(neg, '/') + 1);
		g_hash_table_iter_remove(&it);
	}
	inval_add(out, TREE_ROOT_INO, 0, NULL);
	pthread_mutex_unlock(&t->lock);
}

void tree_inval_clear(GArray *invals)
{
	for (unsigned i = 0; i < invals->len; i++)
		g_free(g_array_index(invals, struct tree_inval, i).name);
	g_array_set_size(invals, 0);
}

static int node_used_cmp(const void *a, const void *b)
{
	const struct node *x = *(struct node *const *)a;
	const struct node *y = *(struct node *const *)b;

	return x->used < y->used ? -1 : x->used > y->used;
}

int tree_pressure_fd(struct tree *t)
{
	return t->pressure_fd;
}

void tree_collect_evictions(struct tree *t, size_t max_bytes, GArray *out)
{
	g_autoptr(GPtrArray) files = NULL;
	GHashTableIter it;
	struct node *n;
	size_t freed = 0, excess;

	pthread_mutex_lock(&t->lock);
	if (t->pressed) {
		eventfd_t v;

		(void)eventfd_read(t->pressure_fd, &v);
		t->pressed = false;
	}
	t->bound = max_bytes;
	if (t->bytes <= max_bytes) {
		pthread_mutex_unlock(&t->lock);
		return;
	}
	/* below the bound, so that this does not run on every check */
	excess = t->bytes - (max_bytes - TREE_SLACK(max_bytes));
	files = g_ptr_array_sized_new(g_hash_table_size(t->by_ino));
	g_hash_table_iter_init(&it, t->by_ino);
	while (g_hash_table_iter_next(&it, NULL, (void **)&n))
		if (!tree_kind_is_dir(n->kind))
			g_ptr_array_add(files, n);
	g_ptr_array_sort(files, node_used_cmp);
	for (unsigned i = 0; i < files->len && freed < excess; i++) {
		n = files->pdata[i];
		inval_add(out, 0, n->parent, n->entry);
		freed += n->bytes;
	}
	pthread_mutex_unlock(&t->lock);
}
