/* The specification's lookup over the index; see lookup.h. */
#include <errno.h>
#include <glib.h>
#include <limits.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

#include "db.h"
#include "log.h"
#include "lookup.h"
#include "index.h"
#include "theme.h"

/* Deeper Inherits chains than this are cut: real ones have 2 or 3. */
#define CHAIN_MAX 64

/* A file of the name in one of the theme's directories (`dir` in the
 * lookup's string chunk). */
struct candidate {
	int pos, base_pos, ext;
	const struct subdir_info *sd;
	const char *dir;
};

struct lookup {
	sqlite3 *db;
	enum lookup_rules rules;
	sqlite3_stmt *theme_get; /* name → id, inherits */
	sqlite3_stmt *icon_in_theme;
	sqlite3_stmt *icon_fallback;
	sqlite3_stmt *subdirs_get;
	sqlite3_stmt *bases_get;
	GHashTable *chains; /* theme name → GArray of theme ids */
	/* Cached like the chains: theme id → (relpath → struct
	 * subdir_info), and basedir id → its position. */
	GHashTable *subdirs;
	GHashTable *base_pos;
	/* one theme's candidates (struct candidate) and their directories'
	 * paths, kept for the next lookup's (emptied after each) */
	GArray *cands;
	GStringChunk *paths;
};

/* CROSS JOIN keeps SQLite on the plan that fits: the few rows of one name
 * first, then their directories (not every directory of the theme first). */
#define LOOKUP_STATEMENTS(l)                                                  \
	{                                                                     \
		{ &(l)->theme_get, "SELECT id, inherits FROM theme "          \
				   "WHERE name = ?1 AND valid" },             \
			{ &(l)->icon_in_theme,                                \
			  "SELECT d.relpath, d.basedir_id, d.path, i.ext "    \
			  "FROM icon i CROSS JOIN dir d ON d.listing_id = "   \
			  "i.listing_id "                                     \
			  "WHERE i.name = ?1 AND d.theme_id = ?2 AND d.kind " \
			  "= ?3" },                                           \
			{ &(l)->subdirs_get,                                  \
			  "SELECT path, pos, size, scale, type, min_size, "   \
			  "max_size, threshold, context FROM subdir "         \
			  "WHERE theme_id = ?1" },                            \
			{ &(l)->bases_get, "SELECT id, pos FROM basedir" },   \
			{ &(l)->icon_fallback,                                \
			  "SELECT d.path, i.ext FROM icon i "                 \
			  "CROSS JOIN dir d ON d.listing_id = i.listing_id "  \
			  "JOIN basedir b ON b.id = d.basedir_id "            \
			  "WHERE i.name = ?1 AND d.kind = ?2 "                \
			  "ORDER BY b.pos, i.ext LIMIT 1" },                  \
	}

static const char *const rules_names[_LOOKUP_RULES_MAX] = {
	[LOOKUP_RULES_GTK] = "gtk",
	[LOOKUP_RULES_KDE] = "kde",
	[LOOKUP_RULES_QT] = "qt",
	[LOOKUP_RULES_SPEC] = "spec",
};

const char *lookup_rules_name(enum lookup_rules rules)
{
	return rules >= 0 && rules < _LOOKUP_RULES_MAX ? rules_names[rules]
						       : NULL;
}

int lookup_rules_from_name(const char *name)
{
	for (int i = 0; i < _LOOKUP_RULES_MAX; i++)
		if (streq(name, rules_names[i]))
			return i;
	return -EINVAL;
}

enum lookup_rules lookup_rules_for_desktop(const char *current_desktop)
{
	g_auto(GStrv) desktops =
		g_strsplit(current_desktop ? current_desktop : "", ":", -1);

	for (char **d = desktops; *d; d++) {
		if (g_ascii_strcasecmp(*d, "KDE") == 0)
			return LOOKUP_RULES_KDE;
		if (g_ascii_strcasecmp(*d, "LXQt") == 0)
			return LOOKUP_RULES_QT;
	}
	return LOOKUP_RULES_GTK;
}

int lookup_new(sqlite3 *db, enum lookup_rules rules, struct lookup **ret)
{
	struct lookup *l = g_new0(struct lookup, 1);
	const struct db_statement stmts[] = LOOKUP_STATEMENTS(l);
	int r;

	l->db = db;
	l->rules = rules;
	l->chains = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					  (GDestroyNotify)g_array_unref);
	l->subdirs = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free,
					   (GDestroyNotify)g_hash_table_unref);
	l->base_pos = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free,
					    g_free);
	l->cands = g_array_new(FALSE, FALSE, sizeof(struct candidate));
	l->paths = g_string_chunk_new(1024);
	r = db_prepare_all(db, stmts, ELEMENTSOF(stmts));
	if (r < 0) {
		lookup_free(l);
		return r;
	}
	/* bindings stay across resets: the kinds are bound once */
	sqlite3_bind_int(l->icon_in_theme, 3, DIR_KIND_SUBDIR);
	sqlite3_bind_int(l->icon_fallback, 2, DIR_KIND_BASE);
	*ret = l;
	return 0;
}

struct lookup *lookup_free(struct lookup *l)
{
	if (!l)
		return NULL;
	{
		const struct db_statement stmts[] = LOOKUP_STATEMENTS(l);
		db_finalize_all(stmts, ELEMENTSOF(stmts));
	}
	g_hash_table_destroy(l->chains);
	g_hash_table_destroy(l->subdirs);
	g_hash_table_destroy(l->base_pos);
	g_array_unref(l->cands);
	g_string_chunk_free(l->paths);
	g_free(l);
	return NULL;
}

sqlite3 *lookup_db(struct lookup *l)
{
	return l->db;
}

enum lookup_rules lookup_rules(struct lookup *l)
{
	return l->rules;
}

void lookup_flush(struct lookup *l)
{
	g_hash_table_remove_all(l->chains);
	g_hash_table_remove_all(l->subdirs);
	g_hash_table_remove_all(l->base_pos);
}

int lookup_name_valid(const char *name)
{
	size_t n = strnlen(name, NAME_MAX + 1);

	return n > 0 && n <= NAME_MAX && !strchr(name, '/') &&
	       !streq(name, ".") && !streq(name, "..");
}

/* Depth-first, in Inherits order, each theme once; a missing theme is skipped, as the
 * specification says, but an error reading the index is an error (a chain
 * cut short by it would resolve other icons, and be cached). */
static int chain_walk(struct lookup *l, const char *name, GArray *ids,
		      GHashTable *seen)
{
	g_auto(GStrv) parents = NULL;
	long long id;
	int rc;

	if (ids->len >= CHAIN_MAX || g_hash_table_contains(seen, name))
		return 0;
	g_hash_table_add(seen, g_strdup(name));

	sqlite3_bind_text(l->theme_get, 1, name, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(l->theme_get);
	if (rc != SQLITE_ROW) {
		(void)sqlite3_reset(l->theme_get);
		return rc == SQLITE_DONE ? 0
					 : db_log_error(l->db, rc, "cannot read theme");
	}
	id = sqlite3_column_int64(l->theme_get, 0);
	parents = theme_split_list(db_column_str(l->theme_get, 1));
	(void)sqlite3_reset(l->theme_get);

	g_array_append_val(ids, id);
	for (char **p = parents; *p; p++) {
		int r = chain_walk(l, *p, ids, seen);

		if (r < 0)
			return r;
	}
	return 0;
}

/* The ids of the themes searched for `theme`, in search order (hicolor and
 * its parents last); owned by `l` until the next flush. */
static int lookup_chain(struct lookup *l, const char *theme,
			const long long **ret_ids, unsigned *ret_n)
{
	GArray *ids = g_hash_table_lookup(l->chains, theme);

	if (!ids) {
		g_autoptr(GHashTable) seen = g_hash_table_new_full(
			g_str_hash, g_str_equal, g_free, NULL);

		int r;

		ids = g_array_new(FALSE, FALSE, sizeof(long long));
		r = chain_walk(l, theme, ids, seen);
		if (r >= 0)
			r = chain_walk(l, "hicolor", ids, seen);
		if (r < 0) {
			g_array_unref(ids);
			return r;
		}
		g_hash_table_insert(l->chains, g_strdup(theme), ids);
	}
	*ret_ids = (const long long *)ids->data;
	*ret_n = ids->len;
	return 0;
}

struct subdir_size {
	int size, scale, type, min_size, max_size, threshold;
};

static bool dir_matches_size(const struct subdir_size *d, int size, int scale)
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
static long long dir_size_distance(const struct subdir_size *d, int size,
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

struct subdir_info {
	int pos;
	/* GTK: the pos of the first directory of the theme with the same
	 * size description (its group) */
	int group;
	bool kde_known; /* a Context KDE uses */
	struct subdir_size size;
};

static bool subdir_size_eq(const struct subdir_size *a,
			   const struct subdir_size *b)
{
	return a->size == b->size && a->scale == b->scale &&
	       a->type == b->type && a->min_size == b->min_size &&
	       a->max_size == b->max_size && a->threshold == b->threshold;
}

/* Each directory's GTK group: the least pos among the directories of the
 * same size description. A theme has a few hundred at most. */
static void subdirs_group(GHashTable *subdirs)
{
	g_autoptr(GList) all = g_hash_table_get_values(subdirs);

	for (GList *i = all; i; i = i->next) {
		struct subdir_info *a = i->data;

		a->group = a->pos;
		for (GList *j = all; j; j = j->next) {
			const struct subdir_info *b = j->data;

			if (b->pos < a->group && subdir_size_eq(&a->size, &b->size))
				a->group = b->pos;
		}
	}
}

static char *icon_path(const char *dir, const char *name, int ext)
{
	return g_strdup_printf("%s/%s.%s", dir, name, icon_ext_name(ext));
}

/* A theme's subdirectories by relative path (and the base dirs' order),
 * cached in `l`. */
static int theme_load(struct lookup *l, long long theme_id,
		      GHashTable **ret_subdirs)
{
	GHashTable *subdirs;
	int rc;

	if (g_hash_table_size(l->base_pos) == 0) {
		while ((rc = sqlite3_step(l->bases_get)) == SQLITE_ROW)
			g_hash_table_insert(
				l->base_pos,
				g_memdup2(&(gint64){ sqlite3_column_int64(
						  l->bases_get, 0) },
					  sizeof(gint64)),
				g_memdup2(&(int){ sqlite3_column_int(
						  l->bases_get, 1) },
					  sizeof(int)));
		(void)sqlite3_reset(l->bases_get);
		if (rc != SQLITE_DONE)
			return db_log_error(l->db, rc, "cannot read base dirs");
	}
	subdirs = g_hash_table_lookup(l->subdirs, &theme_id);
	if (subdirs) {
		*ret_subdirs = subdirs;
		return 0;
	}
	subdirs =
		g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	g_hash_table_insert(l->subdirs, g_memdup2(&theme_id, sizeof(theme_id)),
			    subdirs);
	sqlite3_bind_int64(l->subdirs_get, 1, theme_id);
	while ((rc = sqlite3_step(l->subdirs_get)) == SQLITE_ROW) {
		sqlite3_stmt *q = l->subdirs_get;
		struct subdir_info *sd = g_new(struct subdir_info, 1);

		*sd = (struct subdir_info){
			.pos = sqlite3_column_int(q, 1),
			.kde_known = theme_context_kde_known(db_column_str(q, 8)),
			.size = { .size = sqlite3_column_int(q, 2),
				  .scale = sqlite3_column_int(q, 3),
				  .type = sqlite3_column_int(q, 4),
				  .min_size = sqlite3_column_int(q, 5),
				  .max_size = sqlite3_column_int(q, 6),
				  .threshold = sqlite3_column_int(q, 7) },
		};
		g_hash_table_insert(subdirs, g_strdup(db_column_str(q, 0)), sd);
	}
	(void)sqlite3_reset(l->subdirs_get);
	if (rc != SQLITE_DONE) {
		g_hash_table_remove(l->subdirs, &theme_id);
		return db_log_error(l->db, rc, "cannot read subdirectories");
	}
	subdirs_group(subdirs);
	*ret_subdirs = subdirs;
	return 0;
}

/* The specification's order of files: subdir, then base dir, then
 * extension. */
static int candidate_cmp(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;

	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	if (x->base_pos != y->base_pos)
		return x->base_pos < y->base_pos ? -1 : 1;
	return x->ext - y->ext;
}

/* The specification's LookupIcon: the first file, in candidate order, in a
 * directory that matches the size, else the first at the least
 * distance. */
static const struct candidate *pick_spec(const struct candidate *c, guint n,
					 int size, int scale)
{
	const struct candidate *match = NULL, *near = NULL;
	long long near_dist = LLONG_MAX;

	for (guint i = 0; i < n; i++) {
		long long d;

		if (dir_matches_size(&c[i].sd->size, size, scale)) {
			if (!match || candidate_cmp(&c[i], match) < 0)
				match = &c[i];
			continue;
		}
		d = dir_size_distance(&c[i].sd->size, size, scale);
		if (d < near_dist ||
		    (d == near_dist && candidate_cmp(&c[i], near) < 0)) {
			near_dist = d;
			near = &c[i];
		}
	}
	return match ? match : near;
}

/* Whether x comes before y in Qt's order: base dir, then directory, then
 * png before svg. */
static bool qt_first(const struct candidate *x, const struct candidate *y)
{
	if (x->base_pos != y->base_pos)
		return x->base_pos < y->base_pos;
	if (x->pos != y->pos)
		return x->pos < y->pos;
	return x->ext < y->ext;
}

/* LookupIcon as Qt's qiconloader.cpp runs it: the first file (Qt's order;
 * no xpm) in a directory that matches the size, else the first at the
 * least distance. */
static const struct candidate *pick_qt(const struct candidate *c, guint n,
				       int size, int scale)
{
	const struct candidate *match = NULL, *near = NULL;
	long long near_dist = LLONG_MAX;

	for (guint i = 0; i < n; i++) {
		long long d;

		if (c[i].ext == ICON_EXT_XPM)
			continue;
		if (dir_matches_size(&c[i].sd->size, size, scale)) {
			if (!match || qt_first(&c[i], match))
				match = &c[i];
			continue;
		}
		d = dir_size_distance(&c[i].sd->size, size, scale);
		if (d < near_dist || (d == near_dist && qt_first(&c[i], near))) {
			near_dist = d;
			near = &c[i];
		}
	}
	return match ? match : near;
}

/* GTK 4's difference of a directory from the request: the specification's
 * distance, but a Scalable directory's upper limit is compared with the
 * unscaled size, as GTK does. */
static int gtk_difference(const struct subdir_size *d, int size, int scale)
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
static bool gtk_better(const struct subdir_size *a, int da,
		       const struct subdir_size *b, int db, int size, int scale)
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
		if ((a->type == THEME_DIR_SCALABLE) != (b->type == THEME_DIR_SCALABLE))
			return a->type != THEME_DIR_SCALABLE;
		return abs(size * scale - a->size * a->scale) <=
		       abs(size * scale - b->size * b->scale);
	}
	return true; /* a exact, b not */
}

/* Whether x is GTK 4's file of a group before y: the first directory in
 * the theme's order, in it the last base directory (GTK 4.8 reads them
 * last to first, and keeps what it read first), then png, svg, xpm. */
static bool gtk_first(const struct candidate *x, const struct candidate *y)
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
	const struct candidate *x = a, *y = b;

	if (x->sd->group != y->sd->group)
		return x->sd->group < y->sd->group ? -1 : 1;
	return gtk_first(x, y) ? -1 : gtk_first(y, x) ? 1 : 0;
}

/* GTK 4: each group's file, the groups compared in the order they first
 * appear in the theme (`c` is reordered). */
static const struct candidate *pick_gtk(struct candidate *c, guint n, int size,
					int scale)
{
	const struct candidate *best = NULL;
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
static int kde_delta(const struct subdir_size *d, int size)
{
	switch (d->type) {
	case THEME_DIR_FIXED:
		return d->size - size;
	case THEME_DIR_SCALABLE:
		return size < d->min_size   ? d->min_size - size
		       : size > d->max_size ? d->max_size - size
					    : 0;
	default:
		return size < d->size - d->threshold ? d->size - d->threshold - size
		       : size > d->size + d->threshold
			       ? d->size + d->threshold - size
			       : 0;
	}
}

/* KIconThemes: per extension (png, svg, xpm), its unscaled directories in
 * order at size·scale; a directory replaces the one found when nearer, or
 * when it scales down where that one scaled up; an exact one ends the
 * search (`c` is reordered). */
static const struct candidate *pick_kde(struct candidate *c, guint n, int size,
					int scale)
{
	int want = size * scale;

	qsort(c, n, sizeof(*c), candidate_cmp);
	for (int ext = ICON_EXT_PNG; ext <= ICON_EXT_XPM; ext++) {
		const struct candidate *found = NULL;
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

/* The theme's files of this name, in the index's order. */
static int theme_candidates(struct lookup *l, long long theme_id,
			    const char *name, GArray *out)
{
	sqlite3_stmt *q = l->icon_in_theme;
	GHashTable *subdirs = NULL;
	int rc, r;

	r = theme_load(l, theme_id, &subdirs);
	if (r < 0)
		return r;
	sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(q, 2, theme_id);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		gint64 base_id = sqlite3_column_int64(q, 1);
		const struct subdir_info *sd =
			g_hash_table_lookup(subdirs, db_column_str(q, 0));
		const int *bpos = g_hash_table_lookup(l->base_pos, &base_id);
		struct candidate c;

		if (!sd || !bpos)
			continue;
		c = (struct candidate){ sd->pos, *bpos, sqlite3_column_int(q, 3),
					sd,
					g_string_chunk_insert(l->paths,
							      db_column_str(q, 2)) };
		g_array_append_val(out, c);
	}
	(void)sqlite3_reset(q);
	if (rc != SQLITE_DONE)
		return db_errno(rc); /* the request fails; not logged per icon */
	return 0;
}

/* The file of `name` in one theme that the rules take. */
static int lookup_in_theme(struct lookup *l, long long theme_id,
			   const char *name, int size, int scale,
			   char **ret_path, int *ret_ext)
{
	GArray *c = l->cands;
	const struct candidate *best;
	int r;

	r = theme_candidates(l, theme_id, name, c);
	if (r < 0)
		goto out;
	r = -ENOENT;
	if (c->len == 0)
		goto out; /* no file of that name in the theme */
	switch (l->rules) {
	case LOOKUP_RULES_GTK:
		best = pick_gtk((struct candidate *)c->data, c->len, size, scale);
		break;
	case LOOKUP_RULES_KDE:
		best = pick_kde((struct candidate *)c->data, c->len, size, scale);
		break;
	case LOOKUP_RULES_QT:
		best = pick_qt((struct candidate *)c->data, c->len, size, scale);
		break;
	default:
		best = pick_spec((struct candidate *)c->data, c->len, size, scale);
		break;
	}
	r = best ? 0 : -ENOENT;
	if (best) {
		*ret_path = icon_path(best->dir, name, best->ext);
		*ret_ext = best->ext;
	}
out:
	g_array_set_size(c, 0);
	g_string_chunk_clear(l->paths);
	return r;
}

static int lookup_fallback(struct lookup *l, const char *name, char **ret_path,
			   int *ret_ext)
{
	sqlite3_stmt *q = l->icon_fallback;
	int rc, r = -ENOENT;

	sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(q);
	if (rc == SQLITE_ROW) {
		*ret_ext = sqlite3_column_int(q, 1);
		*ret_path = icon_path(db_column_str(q, 0), name, *ret_ext);
		r = 0;
	} else if (rc != SQLITE_DONE) {
		r = db_errno(rc);
	}
	(void)sqlite3_reset(q);
	return r;
}

/* KIconLoader's next, less specific name within one theme ("a-b-c" →
 * "a-b", "text-x-foo" → "text-foo"...; a media type → its "-x-generic"
 * icon, which has no fallback of its own), keeping a "-symbolic" end; false
 * when there is none. */
static bool kde_fallback_name(GString *cur, bool *generic)
{
	static const char *const media[] = {
		"text",	   "application", "image",     "audio",
		"inode",   "video",	  "message",   "model",
		"multipart", "x-content", "x-epoc",
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

/* KIconLoader searches each theme for the name and then for its less
 * specific names before the next theme: what it finds for "gnumeric-font"
 * in Papirus is Papirus's "gnumeric", not breeze's "gnumeric-font". */
static int lookup_in_theme_kde(struct lookup *l, long long theme_id,
			       const char *name, int size, int scale,
			       char **ret_path, int *ret_ext)
{
	g_autoptr(GString) cur = g_string_new(name);
	bool generic = g_str_has_suffix(name, "-x-generic");
	int r;

	do {
		r = lookup_in_theme(l, theme_id, cur->str, size, scale, ret_path,
				    ret_ext);
		if (r != -ENOENT)
			return r;
	} while (kde_fallback_name(cur, &generic));
	return -ENOENT;
}

int lookup_icon(struct lookup *l, const char *theme, const char *name, int size,
		int scale, char **ret_path, int *ret_ext)
{
	const long long *ids;
	unsigned n;
	int r;

	if (!lookup_name_valid(name) || size < 1 || scale < 1)
		return -ENOENT;
	r = lookup_chain(l, theme, &ids, &n);
	if (r < 0)
		return r;
	for (unsigned i = 0; i < n; i++) {
		r = l->rules == LOOKUP_RULES_KDE
			    ? lookup_in_theme_kde(l, ids[i], name, size, scale,
						  ret_path, ret_ext)
			    : lookup_in_theme(l, ids[i], name, size, scale,
					      ret_path, ret_ext);
		if (r != -ENOENT)
			return r;
	}
	return lookup_fallback(l, name, ret_path, ret_ext);
}

/* "?,?,?" placeholders are not worth it: chains are short, so the ids go
 * into the query as a JSON array. */
static char *chain_json(const long long *ids, unsigned n)
{
	GString *s = g_string_new("[");

	for (unsigned i = 0; i < n; i++)
		g_string_append_printf(s, "%s%lld", i ? "," : "", ids[i]);
	g_string_append_c(s, ']');
	return g_string_free(s, FALSE);
}

/* Prepare `sql` with ?1 bound to the search chain of `theme` (the JSON
 * array, which *ret_json keeps alive) and ?2 to `arg`. */
static int chain_query(struct lookup *l, const char *theme, const char *sql,
		       int arg, char **ret_json, sqlite3_stmt **ret)
{
	const long long *ids;
	unsigned n;
	int r;

	r = lookup_chain(l, theme, &ids, &n);
	if (r < 0)
		return r;
	*ret_json = chain_json(ids, n);
	return db_query(l->db, ret, sql, "ti", *ret_json, arg);
}

/* The first column of each row of `q`, as new strings (g_ptr_array_unref
 * frees all); an error reading is logged as `what`. */
static int column_strings(struct lookup *l, sqlite3_stmt *q, const char *what,
			  GPtrArray **ret)
{
	GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
	int rc;

	while ((rc = sqlite3_step(q)) == SQLITE_ROW)
		g_ptr_array_add(out, g_strdup(db_column_str(q, 0)));
	if (rc != SQLITE_DONE) {
		g_ptr_array_unref(out);
		return db_log_error(l->db, rc, what);
	}
	*ret = out;
	return 0;
}

/* The names of the chain of `theme` and of the unthemed fallbacks whose
 * extension `ext_op` admits ("IS NOT NULL" for all, "!= 1" for bitmaps). */
static int chain_names(struct lookup *l, const char *theme, const char *ext_op,
		       GPtrArray **ret)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	g_autofree char *json = NULL;
	g_autofree char *sql = g_strdup_printf(
		"SELECT DISTINCT name FROM icon WHERE ext %s AND listing_id IN "
		"(SELECT listing_id FROM dir WHERE listing_id NOT NULL "
		"AND ((kind = ?2 AND theme_id IN "
		"(SELECT value FROM json_each(?1))) OR kind = ?3)) "
		"ORDER BY name",
		ext_op);
	int r;

	r = chain_query(l, theme, sql, DIR_KIND_SUBDIR, &json, &q);
	if (r < 0)
		return r;
	sqlite3_bind_int(q, 3, DIR_KIND_BASE);
	return column_strings(l, q, "cannot list icons", ret);
}

int lookup_names(struct lookup *l, const char *theme, GPtrArray **ret)
{
	return chain_names(l, theme, "IS NOT NULL", ret);
}

int lookup_bitmap_names(struct lookup *l, const char *theme, GPtrArray **ret)
{
	G_STATIC_ASSERT(ICON_EXT_SVG == 1);
	return chain_names(l, theme, "!= 1", ret);
}

int lookup_chain_sizes(struct lookup *l, const char *theme, int max,
		       GArray **ret)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	g_autofree char *json = NULL;
	GArray *sizes;
	int r;

	r = chain_query(l, theme,
			"SELECT DISTINCT size FROM subdir WHERE theme_id IN "
			"(SELECT value FROM json_each(?1)) AND type != 1 "
			"AND size <= ?2 ORDER BY size",
			max, &json, &q);
	if (r < 0)
		return r;
	sizes = g_array_new(FALSE, FALSE, sizeof(int));
	while (sqlite3_step(q) == SQLITE_ROW) {
		int s = sqlite3_column_int(q, 0);
		g_array_append_val(sizes, s);
	}
	*ret = sizes;
	return 0;
}

int lookup_name_sizes(struct lookup *l, const char *theme, GHashTable **ret)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	g_autofree char *json = NULL;
	g_autoptr(GHashTable) out = g_hash_table_new_full(
		g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_array_unref);
	GArray *sizes;
	long long first = -1;
	int r, rc;

	/* ordered by name, then chain position: a name's first rows are
	 * those of its theme */
	r = chain_query(l, theme,
			"SELECT i.name, j.key, s.type, s.size * s.scale FROM json_each(?1) j "
			"JOIN dir d ON d.theme_id = j.value AND d.kind = ?2 "
			"JOIN subdir s ON s.theme_id = d.theme_id AND s.path = d.relpath "
			"JOIN icon i ON i.listing_id = d.listing_id "
			"ORDER BY i.name, j.key",
			DIR_KIND_SUBDIR, &json, &q);
	if (r < 0)
		return r;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		const char *name = db_column_str(q, 0);
		long long pos = sqlite3_column_int64(q, 1);
		int px = sqlite3_column_int(q, 3);

		sizes = g_hash_table_lookup(out, name);
		if (!sizes) {
			sizes = g_array_new(FALSE, FALSE, sizeof(int));
			g_hash_table_insert(out, g_strdup(name), sizes);
			first = pos;
		}
		if (pos == first && sqlite3_column_int(q, 2) != THEME_DIR_SCALABLE)
			g_array_append_val(sizes, px);
	}
	if (rc != SQLITE_DONE)
		return db_log_error(l->db, rc, "cannot read the sizes of icons");
	*ret = g_steal_pointer(&out);
	return 0;
}

int lookup_symbolic_pngs(struct lookup *l, const char *theme, GPtrArray **ret)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	g_autofree char *json = NULL;
	GPtrArray *out;
	int r, rc;

	r = chain_query(l, theme,
			"SELECT DISTINCT s.size * s.scale AS px, i.name FROM dir d "
			"JOIN subdir s ON s.theme_id = d.theme_id AND s.path = d.relpath "
			"JOIN icon i ON i.listing_id = d.listing_id "
			"WHERE d.theme_id IN (SELECT value FROM json_each(?1)) "
			"AND d.kind = 2 AND s.type = 0 AND i.ext = ?2 "
			"AND substr(i.name, -9) = '.symbolic' ORDER BY px, i.name",
			ICON_EXT_PNG, &json, &q);
	if (r < 0)
		return r;
	out = g_ptr_array_new_with_free_func(g_free);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW)
		g_ptr_array_add(out, g_strdup_printf("%d %s", sqlite3_column_int(q, 0),
						     db_column_str(q, 1)));
	if (rc != SQLITE_DONE) {
		g_ptr_array_unref(out);
		return db_log_error(l->db, rc, "cannot read symbolic icons");
	}
	*ret = out;
	return 0;
}

int lookup_symbolic_variants(struct lookup *l, const char *theme,
			     GPtrArray **ret)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	g_autofree char *json = NULL;
	int r;

	r = chain_query(l, theme,
			"SELECT DISTINCT name FROM (SELECT i.name FROM dir d "
			"JOIN subdir s ON s.theme_id = d.theme_id AND s.path = d.relpath "
			"JOIN icon i ON i.listing_id = d.listing_id "
			"WHERE d.theme_id IN (SELECT value FROM json_each(?1)) "
			"AND d.kind = 2 AND i.ext = ?2 AND (i.name LIKE '%-symbolic' "
			"OR i.name LIKE '%-symbolic-ltr' OR i.name LIKE '%-symbolic-rtl') "
			"GROUP BY i.name, d.theme_id HAVING count(DISTINCT s.size || '/' "
			"|| s.scale || '/' || s.type || '/' || s.min_size || '/' || "
			"s.max_size || '/' || s.threshold) > 1) ORDER BY name",
			ICON_EXT_SVG, &json, &q);
	if (r < 0)
		return r;
	return column_strings(l, q, "cannot read symbolic icons", ret);
}

static void lookup_dir_clear(gpointer p)
{
	g_free(((struct lookup_dir *)p)->path);
}

int lookup_theme_dirs(struct lookup *l, const char *theme, GArray **ret)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	GArray *dirs;
	int r;

	r = db_query_row(l->db, &q,
			 "SELECT s.path, s.size, s.scale, s.type, s.min_size, "
			 "s.max_size, s.threshold FROM theme t "
			 "LEFT JOIN subdir s ON s.theme_id = t.id "
			 "WHERE t.name = ?1 AND t.valid ORDER BY s.pos",
			 "t", theme);
	if (r < 0)
		return r;
	dirs = g_array_new(FALSE, FALSE, sizeof(struct lookup_dir));
	g_array_set_clear_func(dirs, lookup_dir_clear);
	do {
		struct lookup_dir d;

		if (sqlite3_column_type(q, 0) == SQLITE_NULL) {
			r = SQLITE_DONE; /* a theme without directories */
			break;
		}
		d = (struct lookup_dir){
			.path = g_strdup(db_column_str(q, 0)),
			.size = sqlite3_column_int(q, 1),
			.scale = sqlite3_column_int(q, 2),
			.type = sqlite3_column_int(q, 3),
			.min_size = sqlite3_column_int(q, 4),
			.max_size = sqlite3_column_int(q, 5),
			.threshold = sqlite3_column_int(q, 6),
		};
		g_array_append_val(dirs, d);
	} while ((r = sqlite3_step(q)) == SQLITE_ROW);
	if (r != SQLITE_ROW && r != SQLITE_DONE) {
		g_array_unref(dirs);
		return db_log_error(l->db, r, "cannot read subdirectories");
	}
	*ret = dirs;
	return 0;
}

int lookup_theme_info(struct lookup *l, const char *theme, char **ret_name,
		      char **ret_comment, char **ret_example)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	int r;

	r = db_query_row(l->db, &q,
			 "SELECT display_name, comment, example FROM theme "
			 "WHERE name = ?1 AND valid",
			 "t", theme);
	if (r < 0)
		return r;
	*ret_name = g_strdup(db_column_str(q, 0));
	*ret_comment = g_strdup(db_column_str(q, 1));
	*ret_example = g_strdup(db_column_str(q, 2));
	return 0;
}

int lookup_theme_kde_keys(struct lookup *l, const char *theme, char **ret)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	int r;

	r = db_query_row(l->db, &q,
			 "SELECT kde_keys FROM theme WHERE name = ?1 AND valid",
			 "t", theme);
	if (r < 0)
		return r;
	*ret = g_strdup(db_column_str(q, 0));
	return 0;
}

int lookup_themes(struct lookup *l, GPtrArray **ret)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	GPtrArray *names;
	int r;

	r = db_prepare(l->db,
		       "SELECT name FROM theme WHERE valid ORDER BY name", &q);
	if (r < 0)
		return r;
	names = g_ptr_array_new_with_free_func(g_free);
	while (sqlite3_step(q) == SQLITE_ROW)
		g_ptr_array_add(names, g_strdup(db_column_str(q, 0)));
	*ret = names;
	return 0;
}
