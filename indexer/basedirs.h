/* Where icons come from: the base-directory list and the default paths of the
 * index and the mountpoint, as the design fixes them. Every function returns
 * newly allocated memory the caller frees (g_free, g_strfreev for lists; free()
 * where said). */
#pragma once

#include <stdbool.h>

/* Where the index lives: `explicit_db` (--db) or the default, unless it
 * would lie on a network filesystem (netfs.h), where one file is never
 * shared by two hosts: an explicit one gets a per-host name
 * (<name>.<machine-id>.sqlite); the default goes to local disk,
 * /var/tmp/iconfs-UID (made 0700, refused unless it is a directory of
 * this user's that nobody else may write), else $XDG_RUNTIME_DIR/iconfs-
 * cache (memory: *ret_in_memory). *ret_why: NULL where the usual place is
 * used, else a sentence saying where and why. */
void basedirs_index_path(const char *explicit_db, char **ret_path,
			 char **ret_why, bool *ret_in_memory);

/* $XDG_RUNTIME_DIR/iconfs (falls back to /run/user/UID/iconfs) */
char *basedirs_default_mountpoint(void);

/* The base directories: `icon_dirs` (colon-separated) when given, else
 * $HOME/.icons, $XDG_DATA_HOME/icons, each $XDG_DATA_DIRS/icons and
 * /usr/share/pixmaps. Relative entries are made absolute, paths normalized,
 * duplicates and anything equal to or under `mountpoint` dropped. */
char **basedirs_list(const char *icon_dirs, const char *mountpoint);

/* 1 when `path` equals `dir` or lies under it (lexically, component by
 * component: /a/bc is not under /a/b; everything is under /). */
int basedirs_path_under(const char *path, const char *dir);

/* The one rule for "stays inside the base directories": the base
 * directories' real paths, each resolved when first needed and again while
 * missing (a base directory may appear after the mount). Thread-safe. */
struct basedirs_real;
struct basedirs_real *basedirs_real_new(char *const *basedirs);
struct basedirs_real *basedirs_real_free(struct basedirs_real *b);

/* The real path of `path` (free()) when it resolves to something under a
 * base directory, or, with `dir_ok`, to a base directory itself; NULL when
 * it resolves outside, or not at all. */
char *basedirs_real_inside(struct basedirs_real *b, const char *path,
			   bool dir_ok);

/* Open `path`, a file under one of the base directories as they are
 * listed, read-only, resolved by the kernel beneath that base directory
 * (openat2 RESOLVE_BENEATH): no link can lead out of it, whatever changes
 * meanwhile. The descriptor, and the file's real path in *ret_real
 * (free()) when ret_real is not NULL (a readlink(2) more); -EXDEV for a
 * path that is under no base directory or a link that leaves its own (an
 * absolute one, or one into another base directory: see
 * basedirs_real_inside), -ENOSYS without openat2, another -errno. */
int basedirs_open_beneath(struct basedirs_real *b, const char *path,
			  char **ret_real);
