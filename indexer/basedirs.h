/* Where icons come from: the base-directory list, the default theme, and the
 * default paths of the index and the mountpoint, as the design fixes them.
 * Every function returns newly allocated memory the caller frees (g_free,
 * g_strfreev for lists). */
#pragma once

/* $XDG_CACHE_HOME/iconfs/index.sqlite */
char *basedirs_default_db(void);

/* $XDG_RUNTIME_DIR/iconfs (falls back to /run/user/UID/iconfs) */
char *basedirs_default_mountpoint(void);

/* The base directories: `icon_dirs` (colon-separated) when given, else
 * $HOME/.icons, $XDG_DATA_HOME/icons, each $XDG_DATA_DIRS/icons and
 * /usr/share/pixmaps. Relative entries are made absolute, paths normalized,
 * duplicates and anything equal to or under `mountpoint` dropped. */
char **basedirs_list(const char *icon_dirs, const char *mountpoint);

/* --theme, else gtk-icon-theme-name from gtk-3.0/settings.ini, else Theme in
 * [Icons] of kdeglobals, else "hicolor". */
char *basedirs_default_theme(const char *theme_option);

/* Lexically normalize an absolute path: collapse "//", "/./", "/x/../". */
char *basedirs_normalize(const char *path);

/* 1 when `path` equals `dir` or lies under it (lexically). */
int basedirs_path_under(const char *path, const char *dir);
