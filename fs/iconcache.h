/* GTK's icon-theme.cache format (version 1.0, big-endian), written for the
 * synthetic themes of the mount so that GTK and Qt find every icon without
 * reading the size directories. The mount's directories all hold the same
 * names, so three image lists serve every icon but the few that only some
 * directories hold (GTK's pre-encoded symbolic icons). */
#pragma once

#include <glib.h>

/* `dirs`: directory names in cache order, the last one "scalable".
 * `names`: the names in every size directory (as PNG), sorted; `svg_names`:
 * the names in scalable/ (as SVG), sorted; `only_in` (may be NULL): names
 * in neither list that only some size directories hold (as PNG): name →
 * GArray of guint directory indexes. The cache replaces the contents of
 * `out`. */
void iconcache_build(GPtrArray *dirs, GPtrArray *names, GPtrArray *svg_names,
		     GHashTable *only_in, GByteArray *out);
