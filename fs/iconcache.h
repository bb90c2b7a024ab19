/* GTK's icon-theme.cache format (version 1.0, big-endian), written for the
 * synthetic themes of the mount so that GTK and Qt find every icon without
 * reading the size directories. The mount's directories all hold the same
 * names, so only three image lists exist and every icon points at one. */
#pragma once

#include <glib.h>

/* `dirs`: directory names in cache order, the last one "scalable".
 * `names`: the names in every size directory (as PNG), sorted; `svg_names`:
 * the names in scalable/ (as SVG), sorted. The cache replaces the contents of
 * `out`. */
void iconcache_build(GPtrArray *dirs, GPtrArray *names, GPtrArray *svg_names,
		     GByteArray *out);
