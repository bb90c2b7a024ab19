/* The grammar of the mounted tree's names, as pure functions (fuzzed and
 * unit-tested on their own):
 *
 *   MNT/icons/<Theme>/index.theme
 *   MNT/icons/<Theme>/icon-theme.cache
 *   MNT/icons/<Theme>/<N>x<N>/<name>.png     N 1..1024
 *   MNT/icons/<Theme>/<N>x<N>@2/<name>.png
 *   MNT/icons/<Theme>/scalable/<name>.svg
 *   MNT/<N>/<name>.png, MNT/<N>@<S>/<name>.png   S 1..3
 *
 * Numbers are canonical decimals (no sign, no leading zero), so every file
 * has exactly one name. */
#pragma once

#include <stdbool.h>

#define VIEW_SIZE_MAX  1024
#define VIEW_SCALE_MAX 3

/* The extended attributes, all in the user namespace: a file's source
 * path; on the root, the default theme, what chose it, the toolkit rules
 * the mount resolves with (lookup.h) and the daemon's
 * request counters ("name value" lines: what `iconfs status` shows). */
#define VIEW_XATTR_SOURCE	"user.iconfs.source"
#define VIEW_XATTR_THEME	"user.iconfs.theme"
#define VIEW_XATTR_THEME_SOURCE "user.iconfs.theme-source"
#define VIEW_XATTR_RULES	"user.iconfs.rules"
#define VIEW_XATTR_COUNTERS	"user.iconfs.counters"

/* What each name of the tree is. */
enum tree_kind {
	TREE_ROOT,
	TREE_ICONS,	  /* icons/ */
	TREE_THEME,	  /* icons/<Theme>/ */
	TREE_SIZEDIR,	  /* icons/<Theme>/<N>x<N>[@2]/ */
	TREE_SCALABLE,	  /* icons/<Theme>/scalable/ */
	TREE_FLATDIR,	  /* <N>[@S]/ */
	TREE_ICON,	  /* a .png in a size dir */
	TREE_SVG,	  /* a .svg in scalable/, or in a size view (tree.h) */
	TREE_INDEX_THEME, /* icons/<Theme>/index.theme */
	TREE_ICON_CACHE,  /* icons/<Theme>/icon-theme.cache */
};

static inline bool tree_kind_is_dir(enum tree_kind k)
{
	return k <= TREE_FLATDIR;
}

/* The fixed entries of the root and of a theme directory (besides the flat
 * size views and the theme's size directories). */
#define VIEW_ICONS_DIR	 "icons"
#define VIEW_INDEX_THEME "index.theme"
#define VIEW_ICON_CACHE	 "icon-theme.cache"
#define VIEW_SCALABLE	 "scalable"

/* What entry `name` of a directory of kind `dir` (of `theme` at
 * size x scale) is, from the name grammar alone, without the index: its
 * kind, theme (g_free), size, scale and, for an icon file, the icon name
 * (g_free). `default_theme` is the theme of the flat views (needed for
 * the root only). -ENOENT for a name the grammar does not have, -ENOTDIR
 * under a file. */
struct view_entry {
	enum tree_kind kind;
	char *theme;
	int size, scale;
	char *name;
};
int view_parse_entry(enum tree_kind dir, const char *theme, int size,
		     int scale, const char *default_theme, const char *name,
		     struct view_entry *ret);
void view_entry_clear(struct view_entry *e);

/* Sizes listed in every size view; any other N resolves when named. */
extern const int view_listed_sizes[];
extern const unsigned view_n_listed_sizes;

/* "48" or "48@2" (flat view). Returns 0 or -ENOENT. */
int view_parse_flat_dir(const char *s, int *ret_size, int *ret_scale);

/* "48x48" or "48x48@2" (theme view). Returns 0 or -ENOENT. */
int view_parse_theme_dir(const char *s, int *ret_size, int *ret_scale);

/* "<name>.<ext>" → the icon name (newly allocated, g_free) when `s` ends in
 * ".<ext>" and the name is a valid icon name. Returns 0 or -ENOENT
 * (-ENAMETOOLONG over 255 bytes). */
int view_parse_icon_file(const char *s, const char *ext, char **ret_name);

/* Icon names never rendered as a plain PNG under icons/: GTK's symbolic
 * names ("-symbolic", "-symbolic-ltr", "-symbolic-rtl") and their
 * pre-encoded ".symbolic" variants. */
bool view_is_symbolic(const char *name);

/* A pre-encoded variant ("NAME-symbolic.symbolic", GTK's
 * NAME-symbolic.symbolic.png): in a size view only as the theme's own
 * file of exactly that size, never rendered. */
bool view_is_symbolic_png(const char *name);

/* Nominal lookup size of scalable/<name>.svg: 16 for symbolic names, else
 * 48. */
int view_nominal_size(const char *name);
