/* The icon lookup (the freedesktop Icon Theme Specification 0.13's FindIcon
 * and its helpers, as each toolkit reads it), answered from the index alone
 * with prepared statements.
 *
 * The search order is the theme, its Inherits depth-first in order (missing
 * themes skipped, each theme searched once so cycles end), then hicolor and
 * its parents, then the unthemed fallback <base>/<name>.<ext>: the same for
 * every toolkit. Which file of a theme is taken follows the rules of a
 * toolkit (enum lookup_rules; pick.h).
 *
 * A struct lookup belongs to one thread and one connection. Theme chains are
 * cached in it; call lookup_flush() after the index changed. */
#pragma once

#include <glib.h>
#include <sqlite3.h>

struct lookup;

/* Whose choices within a theme a lookup reproduces (`--rules`).
 * GTK: GTK 4's gtkicontheme.c. Directories of the same Size, Type, limits
 * and Scale are one group (in the order each first appears), and a group's
 * file is its first directory's, from the last base dir that has one (as
 * GTK 4.8 does); an exact match wins,
 * else a group that scales down beats one that scales up, then the nearest,
 * then the requested scale, then a non-Scalable one; on a full tie the later
 * group wins. Extensions: png, svg, xpm.
 * KDE: KIconThemes' KIconTheme::iconPath. Every png of the theme before any
 * svg, before any xpm; per extension the directories in order, the first
 * exact match, else the nearest with downscaling preferred (a smaller one
 * replaces a larger only when nearer); directories whose Context KDE does
 * not know (Legacy, UI, Stock, ...) are skipped; a theme is searched for
 * the name's less specific names ("a-b-c", "a-b", "a") before the next.
 * Qt: Qt's qiconloader.cpp: the specification's LookupIcon, but base dir
 * before directory in its order, png before svg in a directory, and no
 * xpm. (With a theme's icon-theme.cache Qt takes the directories in the
 * cache's order, which gtk-update-icon-cache took from readdir: not
 * followed.)
 * Spec: the specification's LookupIcon as written (subdir, then base dir,
 * then png, svg, xpm; the first match, else the first nearest): no
 * toolkit's, what the conformance tests hold the index to. */
enum lookup_rules {
	LOOKUP_RULES_GTK,
	LOOKUP_RULES_KDE,
	LOOKUP_RULES_QT,
	LOOKUP_RULES_SPEC,
	_LOOKUP_RULES_MAX,
};

/* "gtk", "kde", "qt", "spec". */
const char *lookup_rules_name(enum lookup_rules rules);
/* The rules named `name`, or -EINVAL. */
int lookup_rules_from_name(const char *name);
/* The session's toolkit by XDG_CURRENT_DESKTOP (a colon-separated list, may
 * be NULL): KDE → kde, LXQt → qt, anything else → gtk. */
enum lookup_rules lookup_rules_for_desktop(const char *current_desktop);

int lookup_new(sqlite3 *db, enum lookup_rules rules, struct lookup **ret);
struct lookup *lookup_free(struct lookup *l);

static inline void lookup_freep(struct lookup **l)
{
	lookup_free(*l);
}

/* The connection the lookup reads. */
sqlite3 *lookup_db(struct lookup *l);
enum lookup_rules lookup_rules(struct lookup *l);

/* Forget cached theme chains. */
void lookup_flush(struct lookup *l);

/* 1 when `name` may name an icon at all: not empty, no '/', not "." or "..",
 * at most 255 bytes. */
int lookup_name_valid(const char *name);

/* Resolve `name` at `size` and `scale` in `theme`. On success returns 0 and
 * stores a newly allocated path (g_free()) and the extension index (0 png,
 * 1 svg, 2 xpm); -ENOENT when nothing resolves; other -errno on failure. */
int lookup_icon(struct lookup *l, const char *theme, const char *name, int size,
		int scale, char **ret_path, int *ret_ext);

/* The ids of the themes searched for `theme`, in search order (its
 * Inherits depth-first, then hicolor and its parents); owned by `l` until
 * the next lookup_flush(). What the search chain holds: lookup-chain.h. */
int lookup_chain(struct lookup *l, const char *theme, const long long **ret_ids,
		 unsigned *ret_n);

/* One directory of a theme as its index.theme describes it. */
struct lookup_dir {
	char *path; /* relative to the theme, as listed */
	int size, scale, type, min_size, max_size, threshold;
};

/* A theme's own directories (not its chain's) in its index.theme's order;
 * -ENOENT when no valid theme has that name. The array frees its paths
 * (g_array_unref). */
int lookup_theme_dirs(struct lookup *l, const char *theme, GArray **ret);

/* 0 when a valid theme has the name `theme`, -ENOENT when none does. */
int lookup_theme_exists(struct lookup *l, const char *theme);

/* Display strings of a theme's index.theme (g_free each); -ENOENT when no
 * valid theme has that name. */
int lookup_theme_info(struct lookup *l, const char *theme, char **ret_name,
		      char **ret_comment, char **ret_example);

/* The KDE keys of a theme's index.theme (theme_kde_keys: "KEY=VALUE\n"
 * lines, "" when none; g_free); -ENOENT when no valid theme has that
 * name. */
int lookup_theme_kde_keys(struct lookup *l, const char *theme, char **ret);

/* Names of all valid themes, sorted (g_ptr_array_unref frees all). */
int lookup_themes(struct lookup *l, GPtrArray **ret);
