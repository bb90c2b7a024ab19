/* index.theme parsing (freedesktop Icon Theme Specification 0.13).
 *
 * Parsing is lenient the way desktop toolkits are: CRLF line ends, invalid
 * UTF-8, stray lines that are neither groups, keys nor comments, duplicate
 * groups, localized keys, trailing commas and spaces in lists are all
 * accepted (problems are logged once per file). A listed directory without a
 * group or without a valid Size is skipped; unknown Type is Threshold;
 * defaults are Scale=1, Threshold=2, MinSize=MaxSize=Size.
 *
 * theme_info_parse() returns a struct the caller frees with theme_info_free().
 */
#pragma once

#include <stddef.h>

enum theme_dir_type {
	THEME_DIR_FIXED = 0,
	THEME_DIR_SCALABLE = 1,
	THEME_DIR_THRESHOLD = 2,
};

struct theme_subdir {
	char *path; /* relative, no trailing slash, never "..", never absolute
		     */
	int size;
	int scale;
	enum theme_dir_type type;
	int min_size;
	int max_size;
	int threshold;
	char *context; /* Context=, trimmed; NULL when absent */
};

struct theme_info {
	char *name; /* Name=, may be NULL */
	char *comment;
	char *example;
	char **inherits; /* NULL-terminated, trimmed, no empty entries */
	int hidden;
	/* KDE's keys of [Icon Theme] (theme_kde_keys), "KEY=VALUE\n" each in
	 * that order, "" when none */
	char *kde_keys;
	struct theme_subdir *subdirs; /* Directories then ScaledDirectories */
	size_t n_subdirs;
};

/* The keys of [Icon Theme] that only KDE reads (KIconThemes: each group's
 * default size and sizes, and whether its SVGs follow the colour scheme);
 * NULL-terminated. */
extern const char *const theme_kde_keys[];

/* Whether KDE (KIconThemeDir) uses a directory of this Context (NULL or ""
 * when it has none): it skips Stock, Legacy, UI and any it does not know. */
int theme_context_kde_known(const char *context);

/* Parse the contents of an index.theme; `origin` names it in log lines.
 * Returns 0, or -EBADMSG when there is no [Icon Theme] group at all. */
int theme_info_parse(const char *data, size_t len, const char *origin,
		     struct theme_info **ret);

/* Read and parse a file; files over 16 MiB are refused with -EFBIG. */
int theme_info_load(const char *path, struct theme_info **ret);

struct theme_info *theme_info_free(struct theme_info *info);

static inline void theme_info_freep(struct theme_info **p)
{
	theme_info_free(*p);
}

/* Split a comma-separated list, trimming entries and dropping empty ones.
 * The result is NULL-terminated; free with g_strfreev(). */
char **theme_split_list(const char *value);

/* 1 when `path` is an acceptable subdirectory path, else 0. */
int theme_subdir_path_valid(const char *path);
