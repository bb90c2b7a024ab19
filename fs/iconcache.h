/* GTK's icon-theme.cache format (version 1.0, big-endian), written for the
 * synthetic themes of the mount so that GTK and Qt find every icon without
 * reading the size directories. Names in every size directory share a few
 * image lists; the others (under gtk and qt every name: synth-file.c's cache_sizes)
 * share one list per set of directories. */
#pragma once

#include <glib.h>
#include <stdbool.h>

/* In an `extra` entry: the directory holds the name as SVG, not PNG. */
#define ICONCACHE_SVG (1u << 16)

/* `dirs`: directory names in cache order, the last one "scalable".
 * `names`: the names in every size directory (as PNG), sorted; `svg_names`:
 * the names in scalable/ (as SVG), sorted; `sized_svg` (may be NULL): those
 * of them in every size directory as SVG too; `extra` (may be NULL): names that only
 * some size directories hold, besides scalable/ when in `svg_names`: name →
 * GArray of guint directory indexes (| ICONCACHE_SVG for an SVG). The cache
 * replaces the contents of `out`. */
void iconcache_build(GPtrArray *dirs, GPtrArray *names, GPtrArray *svg_names,
		     GPtrArray *sized_svg, GHashTable *extra, GByteArray *out);
