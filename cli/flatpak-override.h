/* Editing the user's override of an app (overrides/APP of the user
 * installation, the keyfile `flatpak override --user` writes) as text:
 * adding the xdg-run/iconfs grant and the mount in XDG_DATA_DIRS, and
 * taking out only what was added. Every other key, group and comment of
 * the file stays. Also XDG_DATA_DIRS values as lists of directories. Owns
 * nothing; a returned string is the caller's to g_free. */
#pragma once

#include <stdbool.h>

#include "flatpak-context.h"

/* Whether the directory list `dirs` holds `dir` (trailing '/' aside). */
bool flatpak_data_dirs_has(const char *dirs, const char *dir);

/* The user's override of an app (`data`, NULL when there is none) with
 * the grant and the mount in XDG_DATA_DIRS (`inherited`: what the app has
 * without this file). Nothing else of it changes. -EINVAL with a log line
 * naming `path` when `data` cannot be parsed. */
int flatpak_override_apply(const struct flatpak *f, const char *path,
			   const char *data, const char *inherited, char **ret);

/* The user's override `current` (changed since `enable`) without what
 * iconfs added to `before` (NULL: there was no file): the grant unless it
 * was there, the mount in XDG_DATA_DIRS, a key or group iconfs made.
 * `inherited` is what the app has without the file (NULL if unknown).
 * *ret_empty: nothing is left and there was no file before. -EINVAL,
 * nothing logged, when either cannot be parsed. */
int flatpak_override_strip(const struct flatpak *f, const char *current,
			   const char *before, const char *inherited,
			   char **ret, bool *ret_empty);
