/* Which of a name's files in one theme each toolkit takes (enum
 * lookup_rules, whose comment in lookup.h says what each one does): the
 * specification's size match and distance, GTK 4's groups of directories
 * and their differences, KIconThemes' deltas and less specific names,
 * Qt's order. Pure functions over what the lookup read from the index (it
 * owns and frees every candidate and directory); any thread. */
#pragma once

#include <glib.h>
#include <stdbool.h>

#include "lookup.h"

/* A directory's size description, as its index.theme gives it. */
struct pick_size {
	int size, scale, type, min_size, max_size, threshold;
};

/* One directory of a theme. */
struct pick_dir {
	int pos;
	/* GTK: the pos of the first directory of the theme with the same
	 * size description (its group); set by pick_dirs_group() */
	int group;
	bool kde_known; /* a Context KDE uses */
	struct pick_size size;
};

/* A file of the name in one of the theme's directories. */
struct pick_candidate {
	int pos, base_pos, ext; /* its directory's, its base dir's */
	const struct pick_dir *sd;
	const char *dir; /* the directory's path (the caller's string) */
};

/* Each directory's GTK group in `dirs` (relpath → struct pick_dir, one
 * theme's): the least pos among the directories of the same size
 * description. */
void pick_dirs_group(GHashTable *dirs);

/* The file of `c` (n of them, reordered) that `rules` take for `size` at
 * `scale`, or NULL when they take none. */
const struct pick_candidate *pick_file(enum lookup_rules rules,
				       struct pick_candidate *c, guint n,
				       int size, int scale);

/* KIconLoader's next, less specific name within one theme ("a-b-c" →
 * "a-b", "text-x-foo" → "text-foo"...; a media type → its "-x-generic"
 * icon, which has no fallback of its own), keeping a "-symbolic" end;
 * false when there is none. `*generic` starts as whether the name ends in
 * "-x-generic" and is kept across the calls for one name. */
bool pick_kde_next_name(GString *cur, bool *generic);
