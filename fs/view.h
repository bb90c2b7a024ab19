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
 * path; on the root, the default theme, what chose it, and the daemon's
 * request counters ("name value" lines: what `iconfs status` shows). */
#define VIEW_XATTR_SOURCE	"user.iconfs.source"
#define VIEW_XATTR_THEME	"user.iconfs.theme"
#define VIEW_XATTR_THEME_SOURCE "user.iconfs.theme-source"
#define VIEW_XATTR_COUNTERS	"user.iconfs.counters"

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

/* Icon names served only as SVG under icons/: GTK's symbolic names
 * ("-symbolic", "-symbolic-ltr", "-symbolic-rtl") and their pre-rendered
 * ".symbolic" variants. */
bool view_is_symbolic(const char *name);

/* Nominal lookup size of scalable/<name>.svg: 16 for symbolic names, else
 * 48. */
int view_nominal_size(const char *name);
