/* What a mount asks the machine's shared layer to hold (the system icons it
 * had to render itself), both sides: the mount's requests and the
 * service's taking them. The shared layer is sized by use: the service that
 * builds it renders the machine's default theme, then what the machine's
 * users asked for (asked_take, rendered by cli/prerender.c), within its
 * budget. A mount's request
 * is a file it writes into the layer's `requests` directory (beside the
 * layer; made by the service, mode 1733: anyone may add a file, nobody but
 * the service may list them), one line "PX SOURCE" per render. A request
 * names a file, never holds bytes: the service renders only icon files of
 * its own index of the system's directories, so a user can never place
 * bytes in the layer. Renders of files under the user's home are never
 * asked for (nobody else could use them, and others need not learn of
 * them). */
#pragma once

#include <glib.h>
#include <sqlite3.h>
#include <stddef.h>

/* The directory of the requests of the layer at `layer`. g_free() it. */
char *asked_dir(const char *layer);

struct asked;

/* Requests for the layer at `layer` (NULL: none; *ret is NULL when there
 * is nowhere to ask: no layer, or its directory takes no requests). */
int asked_new(const char *layer, struct asked **ret);
struct asked *asked_free(struct asked *a); /* writes what is left */

/* Note a render of `source` at `px` (thread-safe; a = NULL does nothing).
 * They are written in batches, at most ASKED_MAX per mount. */
void asked_note(struct asked *a, const char *source, unsigned px);

/* Note that the mount serves theme `theme`: a line "theme THEME" asks the
 * layer to hold its synthesized files (made once for all users). */
void asked_note_theme(struct asked *a, const char *theme);

#define ASKED_MAX 8192

/* The service's side. A request: an icon file of the layer's index at a
 * pixel size (at most ASKED_PX_MAX), and how many request files asked for
 * it. */
struct asked_item {
	char *source;
	int ext; /* enum icon_ext */
	unsigned px, count;
};

#define ASKED_PX_MAX 512

/* Every request of the layer's requests directory (only the service's own
 * directory: made mode 1733 when missing), the most asked first; lines
 * that do not name an icon file of the index `db` (the layer's, read from
 * the system's directories) at a sane size are left out, and the files
 * read are removed. A GArray of struct asked_item (g_array_unref). */
GArray *asked_take(sqlite3 *db, const char *layer, GPtrArray **ret_themes);

/* ...and *ret_themes: the themes asked for ("theme THEME" lines), themes
 * of the index `db`, the most asked first, at most ASKED_THEMES_MAX. */
#define ASKED_THEMES_MAX 16
