/* The synthesized files of the mounted tree and the name lists behind
 * them, per theme: the sizes its views list, its index.theme, its
 * icon-theme.cache, and the names its size views and scalable/ hold. Each is
 * built from the index once and kept until the index changes: one
 * generation, bumped by synth_invalidate(), dates everything built, so a
 * result built from an older index is returned to its caller but never
 * kept. What the index stores (table synth, built by synth_store() in the
 * background, dated by the index's own generation) is read instead of
 * building, so the first reader after a mount waits for nothing. The two
 * files' bytes are made by synth-file.h. Thread-safe; builders use the
 * caller's struct lookup. Returned objects are new references
 * (g_bytes_unref, g_ptr_array_unref, g_array_unref). */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <sqlite3.h>
#include <stdint.h>

#include "generation.h"
#include "lookup.h"

struct synth;

/* `gen` dates what is built (borrowed; NULL: a generation of its own, for
 * a command that builds from one index and ends). */
int synth_new(struct generation *gen, struct synth **ret);
struct synth *synth_free(struct synth *s);

/* The index changed (its generation moved on first): what was built
 * goes. */
void synth_invalidate(struct synth *s);

/* Whether the synthesized themes list an @2 twin of every size view (under
 * every rules but gtk). */
bool synth_scaled_listed(struct lookup *l);

/* The sizes toolkits ask for, at which the synthesized cache lists every
 * name under gtk and qt (besides those its own theme has it at): where
 * GTK and Qt load window icons and file managers zoom. */
extern const int synth_asked_sizes[];
extern const unsigned synth_n_asked_sizes;

/* The sizes listed in a theme's size views: the standard ones and the Size
 * of every non-Scalable directory in its chain, sorted, each once (int);
 * under gtk also 2N for each standard N. */
int synth_sizes(struct lookup *l, const char *theme, GArray **ret);

/* The sizes whose @2 views a theme lists (int, sorted): those of
 * synth_sizes() where synth_scaled_listed(); under gtk the Size of every
 * Scale=2 directory of its chain that holds an icon, and the
 * icon-theme.cache lists in such a view only the names a Scale=2 directory
 * of that Size holds. GTK compares sizes in pixels and, between two exact
 * matches, takes the directory of the scale asked for: a theme's own
 * drawing for N at scale 2 (Papirus's 22x22@2x/devices/computer.svg for
 * 22@2) beats its 2N×2N one (48x48's, which 44x44 serves) only where N×N@2
 * lists the name. Without these views GTK 3 and 4 at scale 2 showed
 * another drawing than stock for 18-20% of lookups (test_fidelity.py), two
 * thirds of them Papirus's; 5-7% with them. Names no Scale=2 directory
 * holds are in none: GTK reaches them by pixels in the scale-1 views
 * (where its preference for scaling down, which compares a directory's
 * Size with the size asked, still parts some from stock). */
int synth_scaled_sizes(struct lookup *l, const char *theme, GArray **ret);

/* The names every size view of `theme` lists (all names resolvable in its
 * chain, symbolic ones included), or with `svg` those of its scalable/
 * (whose nominal-size lookup is an SVG); sorted. */
int synth_names(struct synth *s, struct lookup *l, const char *theme, bool svg,
		GPtrArray **ret);

/* GTK's pre-encoded symbolic icons ("PX NAME.symbolic" entries, sorted),
 * which a size view lists only at PX, and only at scale 1: GTK takes
 * NAME.symbolic.png of an exact-size directory before the SVG, and
 * recolours it without drawing anything. Those of `theme`'s chain
 * (lookup_symbolic_pngs()) and, under gtk, one at SYNTH_SYMBOLIC_PX for
 * each symbolic name of scalable/ that has none there, encoded from its
 * SVG by the render workers. A new reference. */
#define SYNTH_SYMBOLIC_PX 16
int synth_symbolic_pngs(struct synth *s, struct lookup *l, const char *theme,
			GPtrArray **ret);

/* The symbolic names whose SVG at some listed size (scale 1) is another
 * than scalable/'s (a theme's own variant for that size): "PX NAME"
 * entries, which a size view lists at PX as NAME.svg, so that GTK draws
 * the variant it draws without the mount. A new reference. */
int synth_symbolic_svgs(struct synth *s, struct lookup *l, const char *theme,
			GPtrArray **ret);

/* The names a size view holds as their SVG source's own bytes (NAME.svg,
 * never NAME.png), because the toolkit of the rules renders SVGs itself:
 * under kde every name of scalable/ (KDE searches a theme for a png before
 * an svg, so such a name is an SVG at every size), under qt those of them
 * without any bitmap in the chain (Qt's pick may be a bitmap at some size
 * otherwise); none under gtk and spec. Sorted; a new reference. */
int synth_sized_svgs(struct synth *s, struct lookup *l, const char *theme,
		     GPtrArray **ret);

/* Whether the sorted list `names` holds `name`. */
bool synth_list_has(GPtrArray *names, const char *name);

/* The NAME of a "PX NAME" entry (synth_symbolic_pngs(),
 * synth_symbolic_svgs()) when its PX is `px`, else NULL (a pointer into
 * `entry`). */
const char *synth_entry_at(const char *entry, unsigned px);

enum synth_file {
	/* every size view as a Fixed directory, scalable/ as Scalable,
	 * Inherits=hicolor; under the gtk rules, hicolor's also lists those
	 * of its real directories that GTK attaches its built-in icons (its
	 * GResource) under, as its own index.theme describes them; under the
	 * kde rules, the theme's KDE keys (group sizes, FollowsColorScheme)
	 * are kept */
	SYNTH_INDEX_THEME,
	/* GTK's cache of the same directories and the name lists */
	SYNTH_ICON_CACHE,
};

/* The bytes of a theme's synthetic index.theme or icon-theme.cache. */
int synth_file(struct synth *s, struct lookup *l, const char *theme,
	       enum synth_file which, GBytes **ret);

/* Store in the index (on `db`, a connection that may write; the caller's
 * background thread, never a request) what the next mount's first reader
 * will want, built from the index as it is now: every kind of `themes`
 * (NULL-terminated), of the themes stored before and of those built here
 * since the last call. Themes not reached by `deadline` (now_ms(); -1 for
 * none) are left for the next call. Rows of older generations go once all
 * are stored. Returns 1 when there is more to do, 0, or -errno. */
int synth_store(struct synth *s, struct lookup *l, sqlite3 *db,
		const char *const *themes, long long deadline);
/* Whether every kind of `theme` is stored for the index as it is now and
 * the rules of `l`. */
bool synth_stored(struct lookup *l, const char *theme);

/* The themes whose synthesized files a session of default theme `theme`
 * reads under `rules`: that theme (its chain flattened into it) and those
 * its toolkit always loads after it, each from its own index.theme and
 * icon-theme.cache: GTK 3 and 4 add Adwaita and gnome before hicolor
 * (gtkicontheme.c; Debian's GTK 2 reads Adwaita too), KIconLoader its
 * own default theme, breeze (kiconfinder5 5.103 reads breeze's
 * index.theme beside Papirus's), the others hicolor alone.
 * Some may not be installed.
 * NULL-terminated (g_strfreev). */
char **synth_session_themes(const char *theme, enum lookup_rules rules);

/* Whether synth_stored() holds for every one of `themes` (NULL-terminated)
 * that is installed. */
bool synth_all_stored(struct lookup *l, char *const *themes);

/* Whether anything was built since the last synth_store(). */
bool synth_unstored(struct synth *s);
/* Objects built so far rather than read from the index (or its layer). */
unsigned long long synth_built(struct synth *s);
