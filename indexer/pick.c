/* The toolkits' choice of a file within one theme; see pick.h. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "pick.h"
#include "rows.h"
#include "theme.h"

static bool dir_matches_size(const struct pick_size *d, int size, int scale)
{
	if (d->scale != scale)
		return false;
	switch (d->type) {
	case THEME_DIR_FIXED:
		return d->size == size;
	case THEME_DIR_SCALABLE:
		return d->min_size <= size && size <= d->max_size;
	default:
		return d->size - d->threshold <= size &&
		       size <= d->size + d->threshold;
	}
}

/* As the specification writes it, with iconsize*iconscale where it has a
 * typo. The Threshold case uses MinSize and MaxSize (which default to Size)
 * exactly as written. */
static long long dir_size_distance(const struct pick_size *d, int size,
				   int scale)
{
	long long want = (long long)size * scale;

	switch (d->type) {
	case THEME_DIR_FIXED:
		return llabs((long long)d->size * d->scale - want);
	case THEME_DIR_SCALABLE:
		if (want < (long long)d->min_size * d->scale)
			return (long long)d->min_size * d->scale - want;
		if (want > (long long)d->max_size * d->scale)
			return want - (long long)d->max_size * d->scale;
		return 0;
	default:
		if (want < (long long)(d->size - d->threshold) * d->scale)
			return (long long)d->min_size * d->scale - want;
		if (want > (long long)(d->size + d->threshold) * d->scale)
			return want - (long long)d->max_size * d->scale;
		return 0;
	}
}

static bool pick_size_eq(const struct pick_size *a, const struct pick_size *b)
{
	return a->size == b->size && a->scale == b->scale &&
	       a->type == b->type && a->min_size == b->min_size &&
	       a->max_size == b->max_size && a->threshold == b->threshold;
}

static guint pick_size_hash(gconstpointer p)
{
	const struct pick_size *z = p;

	return (guint)(((((z->size * 31u + z->scale) * 31u + z->type) * 31u +
			 z->min_size) * 31u + z->max_size) * 31u + z->threshold);
}

static gboolean pick_size_equal(gconstpointer a, gconstpointer b)
{
	return pick_size_eq(a, b);
}

/* In one pass over the directories and one over a table of the first of
 * each size description (pairwise, Breeze's 367 directories took 2 M
 * instructions, at every thread's first lookup in the theme). */
void pick_dirs_group(GHashTable *dirs)
{
	g_autoptr(GHashTable) first =
		g_hash_table_new(pick_size_hash, pick_size_equal);
	GHashTableIter it;
	struct pick_dir *d, *f;

	g_hash_table_iter_init(&it, dirs);
	while (g_hash_table_iter_next(&it, NULL, (gpointer *)&d)) {
		f = g_hash_table_lookup(first, &d->size);
		if (!f || d->pos < f->pos)
			g_hash_table_insert(first, &d->size, d);
	}
	g_hash_table_iter_init(&it, dirs);
	while (g_hash_table_iter_next(&it, NULL, (gpointer *)&d)) {
		f = g_hash_table_lookup(first, &d->size);
		d->group = f->pos;
	}
}

/* The specification's order of files: subdir, then base dir, then
 * extension. */
static int candidate_cmp(const void *a, const void *b)
{
	const struct pick_candidate *x = a, *y = b;

	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	if (x->base_pos != y->base_pos)
		return x->base_pos < y->base_pos ? -1 : 1;
	return x->ext - y->ext;
}

/* candidate_cmp as a "before". */
static bool spec_first(const struct pick_candidate *x,
		       const struct pick_candidate *y)
{
	return candidate_cmp(x, y) < 0;
}

/* Whether x comes before y in Qt's order: base dir, then directory, then
 * png before svg. */
static bool qt_first(const struct pick_candidate *x,
		     const struct pick_candidate *y)
{
	if (x->base_pos != y->base_pos)
		return x->base_pos < y->base_pos;
	if (x->pos != y->pos)
		return x->pos < y->pos;
	return x->ext < y->ext;
}

/* The specification's LookupIcon in the order `first`: the first file in a
 * directory that matches the size, else the first at the least distance;
 * xpm files skipped with `no_xpm`. The specification's own in its order
 * (spec_first); Qt's qiconloader.cpp in Qt's (qt_first), without xpm. */
static const struct pick_candidate *
pick_lookup_icon(const struct pick_candidate *c, guint n, int size, int scale,
		 bool (*first)(const struct pick_candidate *x,
			       const struct pick_candidate *y),
		 bool no_xpm)
{
	const struct pick_candidate *match = NULL, *near = NULL;
	long long near_dist = LLONG_MAX;

	for (guint i = 0; i < n; i++) {
		long long d;

		if (no_xpm && c[i].ext == ICON_EXT_XPM)
			continue;
		if (dir_matches_size(&c[i].sd->size, size, scale)) {
			if (!match || first(&c[i], match))
				match = &c[i];
			continue;
		}
		d = dir_size_distance(&c[i].sd->size, size, scale);
		if (d < near_dist || (d == near_dist && first(&c[i], near))) {
			near_dist = d;
			near = &c[i];
		}
	}
	return match ? match : near;
}

/* GTK 4's difference of a directory from the request: the specification's
 * distance, but a Scalable directory's upper limit is compared with the
 * unscaled size, as GTK does. */
static int gtk_difference(const struct pick_size *d, int size, int scale)
{
	int want = size * scale;

	switch (d->type) {
	case THEME_DIR_FIXED:
		return abs(want - d->size * d->scale);
	case THEME_DIR_SCALABLE:
		if (want < d->min_size * d->scale)
			return d->min_size * d->scale - want;
		if (size > d->max_size * d->scale)
			return want - d->max_size * d->scale;
		return 0;
	default:
		if (want < (d->size - d->threshold) * d->scale)
			return (d->size - d->threshold) * d->scale - want;
		if (want > (d->size + d->threshold) * d->scale)
			return want - (d->size + d->threshold) * d->scale;
		return 0;
	}
}

/* Whether group a (difference da) beats group b (db), as GTK 4 decides;
 * on a full tie the later one, a, wins. */
static bool gtk_better(const struct pick_size *a, int da,
		       const struct pick_size *b, int db, int size, int scale)
{
	if (da != 0 || db == 0) {
		if (da != 0) {
			/* scaling down beats scaling up, then the nearer */
			if ((a->size >= size) != (b->size >= size))
				return a->size >= size;
			if (da != db)
				return da < db;
		}
		if ((a->scale == scale) != (b->scale == scale))
			return a->scale == scale;
		if ((a->type == THEME_DIR_SCALABLE) !=
		    (b->type == THEME_DIR_SCALABLE))
			return a->type != THEME_DIR_SCALABLE;
		return abs(size * scale - a->size * a->scale) <=
		       abs(size * scale - b->size * b->scale);
	}
	return true; /* a exact, b not */
}

/* Whether x is GTK 4's file of a group before y: the first directory in
 * the theme's order, in it the last base directory (GTK 4.8 reads them
 * last to first, and keeps what it read first), then png, svg, xpm. */
static bool gtk_first(const struct pick_candidate *x,
		      const struct pick_candidate *y)
{
	if (x->pos != y->pos)
		return x->pos < y->pos;
	if (x->base_pos != y->base_pos)
		return x->base_pos > y->base_pos;
	return x->ext < y->ext;
}

/* By group (in the order the groups first appear), each group's file
 * (gtk_first) first. */
static int gtk_cmp(const void *a, const void *b)
{
	const struct pick_candidate *x = a, *y = b;

	if (x->sd->group != y->sd->group)
		return x->sd->group < y->sd->group ? -1 : 1;
	return gtk_first(x, y) ? -1 : gtk_first(y, x) ? 1 : 0;
}

/* GTK 4: each group's file, the groups compared in the order they first
 * appear in the theme (`c` is reordered). */
static const struct pick_candidate *pick_gtk(struct pick_candidate *c, guint n,
					     int size, int scale)
{
	const struct pick_candidate *best = NULL;
	int best_diff = 0;

	qsort(c, n, sizeof(*c), gtk_cmp);
	for (guint i = 0; i < n; i++) {
		int d;

		if (i > 0 && c[i].sd->group == c[i - 1].sd->group)
			continue; /* not its group's file */
		d = gtk_difference(&c[i].sd->size, size, scale);
		if (!best || gtk_better(&c[i].sd->size, d, &best->sd->size,
					best_diff, size, scale)) {
			best = &c[i];
			best_diff = d;
		}
	}
	return best;
}

/* KIconThemes' delta of a directory: negative when its icons must be
 * scaled up. */
static int kde_delta(const struct pick_size *d, int size)
{
	switch (d->type) {
	case THEME_DIR_FIXED:
		return d->size - size;
	case THEME_DIR_SCALABLE:
		return size < d->min_size   ? d->min_size - size
		       : size > d->max_size ? d->max_size - size
					    : 0;
	default:
		return size < d->size - d->threshold
			       ? d->size - d->threshold - size
		       : size > d->size + d->threshold
			       ? d->size + d->threshold - size
			       : 0;
	}
}

/* KIconThemes: per extension (png, svg, xpm), its unscaled directories in
 * order at size·scale; a directory replaces the one found when nearer, or
 * when it scales down where that one scaled up; an exact one ends the
 * search (`c` is reordered). */
static const struct pick_candidate *pick_kde(struct pick_candidate *c, guint n,
					     int size, int scale)
{
	int want = size * scale;

	qsort(c, n, sizeof(*c), candidate_cmp);
	for (int ext = ICON_EXT_PNG; ext <= ICON_EXT_XPM; ext++) {
		const struct pick_candidate *found = NULL;
		int delta = -INT_MAX;

		for (guint i = 0; i < n; i++) {
			int dw;

			if (c[i].ext != ext || c[i].sd->size.scale != 1 ||
			    !c[i].sd->kde_known)
				continue;
			dw = kde_delta(&c[i].sd->size, want);
			if (abs(dw) >= abs(delta) && (dw < 0 || delta > 0))
				continue;
			found = &c[i];
			delta = dw;
			if (delta == 0)
				break;
		}
		if (found)
			return found;
	}
	return NULL;
}

bool pick_kde_next_name(GString *cur, bool *generic)
{
	static const char *const media[] = {
		"text",	     "application", "image",   "audio",
		"inode",     "video",	    "message", "model",
		"multipart", "x-content",   "x-epoc",
	};
	bool symbolic = g_str_has_suffix(cur->str, "-symbolic");
	char *dash;

	if (*generic)
		return false;
	if (symbolic)
		g_string_truncate(cur, cur->len - strlen("-symbolic"));
	dash = strrchr(cur->str, '-');
	if (dash && dash - cur->str > 1) {
		g_string_truncate(cur, dash - cur->str);
		if (g_str_has_suffix(cur->str, "-x"))
			g_string_truncate(cur, cur->len - 2);
		if (symbolic)
			g_string_append(cur, "-symbolic");
		return true;
	}
	for (size_t i = 0; i < ELEMENTSOF(media); i++)
		if (streq(cur->str, media[i])) {
			g_string_append(cur, "-x-generic");
			*generic = true;
			return true;
		}
	return false;
}

const struct pick_candidate *pick_file(enum lookup_rules rules,
				       struct pick_candidate *c, guint n,
				       int size, int scale)
{
	switch (rules) {
	case LOOKUP_RULES_GTK:
		return pick_gtk(c, n, size, scale);
	case LOOKUP_RULES_KDE:
		return pick_kde(c, n, size, scale);
	case LOOKUP_RULES_QT:
		return pick_lookup_icon(c, n, size, scale, qt_first, true);
	default:
		return pick_lookup_icon(c, n, size, scale, spec_first, false);
	}
}
