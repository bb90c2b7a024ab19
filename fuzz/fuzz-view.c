/* libFuzzer target: the mounted tree's name grammar. Whatever parses must
 * be in range and canonical (formatting it again gives the same name). */
#include <errno.h>
#include <glib.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = strndup((const char *)data, size), *name = NULL;
	char again[64];
	int n, sc;

	if (view_parse_flat_dir(s, &n, &sc) == 0) {
		if (n < 1 || n > VIEW_SIZE_MAX || sc < 1 || sc > VIEW_SCALE_MAX)
			abort();
		if (strchr(s, '@'))
			snprintf(again, sizeof(again), "%d@%d", n, sc);
		else
			snprintf(again, sizeof(again), "%d", n);
		if (strcmp(again, s) != 0)
			abort();
	}
	if (view_parse_theme_dir(s, &n, &sc) == 0) {
		if (sc == 1)
			snprintf(again, sizeof(again), "%dx%d", n, n);
		else
			snprintf(again, sizeof(again), "%dx%d@%d", n, n, sc);
		if (strcmp(again, s) != 0 || sc > 2)
			abort();
	}
	if (view_parse_icon_file(s, "png", &name) == 0) {
		if (!*name || strchr(name, '/') ||
		    strlen(name) + 4 != strlen(s))
			abort();
		g_free(name);
	}
	free(s);
	return 0;
}
