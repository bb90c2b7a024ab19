/* The icon lookup (the freedesktop Icon Theme Specification 0.13's FindIcon
 * and its helpers, as each toolkit reads it), answered from the index alone
 * with prepared statements.
 *
 * The search order is the theme, its Inherits depth-first in order (missing
 * themes skipped, each theme searched once so cycles end), then hicolor and
 * its parents, then the unthemed fallback <base>/<name>.<ext>: the same for
 * every toolkit. Which file of a theme is taken follows the rules of a
 * toolkit (enum lookup_rules).
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

/* Every name that resolves in `theme` at any size: the names in its search
 * chain plus the unthemed fallbacks, sorted, each once. The array and its
 * strings are newly allocated (g_ptr_array_unref frees all). */
int lookup_names(struct lookup *l, const char *theme, GPtrArray **ret);

/* The names of that list that have a bitmap (png, xpm) anywhere in the
 * chain or among the unthemed fallbacks; sorted, each once. */
int lookup_bitmap_names(struct lookup *l, const char *theme, GPtrArray **ret);

/* Sizes of the non-Scalable directories in the search chain of `theme`,
 * sorted, each once, up to `max`. */
int lookup_chain_sizes(struct lookup *l, const char *theme, int max,
		       GArray **ret);

/* For each name of the chain of `theme`: the pixel sizes (Size·Scale) of
 * the non-Scalable directories that hold it in the first theme of the
 * chain that has it at all, the theme a toolkit takes it from. A new
 * table: name (string) → GArray of int, in no order, possibly empty. */
int lookup_name_sizes(struct lookup *l, const char *theme, GHashTable **ret);

/* GTK's pre-encoded symbolic icons ("NAME.symbolic.png", as
 * gtk-encode-symbolic-svg writes them) in the Fixed directories of the
 * search chain of `theme`: each entry "PX NAME", NAME without ".png" (so
 * ending in ".symbolic"), PX the directory's size·scale; sorted by PX, then
 * NAME, each once (g_ptr_array_unref frees all). */
int lookup_symbolic_pngs(struct lookup *l, const char *theme, GPtrArray **ret);

/* Symbolic names ("-symbolic", "-symbolic-ltr", "-symbolic-rtl") that a
 * theme of the search chain of `theme` has as SVG in directories of more
 * than one size description: the names whose pick may change with the
 * size. Sorted, each once (g_ptr_array_unref frees all). */
int lookup_symbolic_variants(struct lookup *l, const char *theme,
			     GPtrArray **ret);

/* One directory of a theme as its index.theme describes it. */
struct lookup_dir {
	char *path; /* relative to the theme, as listed */
	int size, scale, type, min_size, max_size, threshold;
};

/* A theme's own directories (not its chain's) in its index.theme's order;
 * -ENOENT when no valid theme has that name. The array frees its paths
 * (g_array_unref). */
int lookup_theme_dirs(struct lookup *l, const char *theme, GArray **ret);

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
