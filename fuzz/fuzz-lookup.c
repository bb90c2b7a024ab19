/* libFuzzer target: the spec lookup over a fuzzed theme. The input is the
 * index.theme of theme "t" (inheriting nothing but what it says) in a base
 * directory with a few icon directories; it is indexed into an in-memory
 * database and looked up at several sizes and scales. Every answer must be
 * an existing file under the base directory. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db.h"
#include "log.h"
#include "lookup.h"
#include "scan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *base;

static void setup(void)
{
	static const char *const dirs[] = { "16",	"32",	      "a/b",
					    "scalable", "48x48/apps", "x" };
	base = g_dir_make_tmp("iconfs-fuzz-XXXXXX", NULL);
	if (!base)
		abort();
	for (size_t i = 0; i < G_N_ELEMENTS(dirs); i++) {
		g_autofree char *d = g_build_filename(base, "t", dirs[i], NULL);
		g_autofree char *png = g_build_filename(d, "icon.png", NULL);
		g_autofree char *svg = g_build_filename(d, "other.svg", NULL);

		g_mkdir_with_parents(d, 0755);
		g_file_set_contents(png, "x", 1, NULL);
		g_file_set_contents(svg, "x", 1, NULL);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "icon", "other", "missing" };
	g_autofree char *index = NULL;
	char *bases[] = { NULL, NULL };
	sqlite3 *db = NULL;
	struct lookup *l = NULL;

	log_set_level(LOG_LEVEL_ERROR - 1);
	if (!base)
		setup();
	index = g_build_filename(base, "t", "index.theme", NULL);
	if (!g_file_set_contents(index, (const char *)data, size, NULL))
		return 0;
	bases[0] = base;
	if (db_open(":memory:", 0, &db) < 0)
		abort();
	if (scan_refresh(db, bases, 0, NULL, NULL, NULL) < 0 ||
	    lookup_new(db, LOOKUP_RULES_GTK, &l) < 0)
		abort();
	for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
		for (int s = 1; s <= 512; s *= 3)
			for (int scale = 1; scale <= 3; scale++) {
				g_autofree char *path = NULL;
				int ext;

				if (lookup_icon(l, "t", names[i], s, scale,
						&path, &ext) < 0)
					continue;
				if (!g_str_has_prefix(path, base) ||
				    !g_file_test(path, G_FILE_TEST_IS_REGULAR))
					abort();
			}
	lookup_free(l);
	sqlite3_close(db);
	return 0;
}
