/* What the search chain of a theme holds, as the lists the synthesized
 * files are made of: every name it resolves, those with a bitmap, the
 * directories' sizes and each name's, GTK's pre-encoded symbolic PNGs and
 * the symbolic names with a variant per size. Each list is read from the
 * index in one query over the chain of lookup_chain(), with the caller's
 * struct lookup (its connection; one thread, like the lookup); the caller
 * frees what it gets as said at each. */
#pragma once

#include <glib.h>
#include <stdbool.h>

#include "lookup.h"

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
/* The Sizes of its Scale=2 directories that hold an icon, Scalable ones
 * too, sorted, each once. */
int lookup_chain_scaled_sizes(struct lookup *l, const char *theme,
			      GArray **ret);

/* A directory's Size and Scale, and whether it is Scalable. */
struct lookup_size {
	int size, scale;
	bool scalable;
};

/* The pixel size (Size × Scale) of a non-Scalable directory, where the
 * synthesized cache lists its names; 0 for a Scalable one. */
static inline int lookup_size_px(const struct lookup_size *z)
{
	return z->scalable ? 0 : z->size * z->scale;
}

/* For each name of the chain of `theme`: the directories that hold it in
 * the first theme of the chain that has it at all, the theme a toolkit
 * takes it from: every non-Scalable one, and the Scalable ones of Scale 2.
 * A new table: name (string) → GArray of struct lookup_size, in no order,
 * possibly empty. */
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
