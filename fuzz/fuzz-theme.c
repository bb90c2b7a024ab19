/* libFuzzer target: index.theme parsing must accept or reject any bytes
 * without crashing, and what it accepts must respect theme.h's rules. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "theme.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct theme_info *info = NULL;

	log_set_level(LOG_LEVEL_ERROR - 1);
	if (theme_info_parse((const char *)data, size, "fuzz", &info) < 0)
		return 0;
	for (size_t i = 0; i < info->n_subdirs; i++) {
		const struct theme_subdir *d = &info->subdirs[i];

		if (!theme_subdir_path_valid(d->path) || d->size <= 0 ||
		    d->scale < 1 || d->type > THEME_DIR_THRESHOLD)
			abort();
	}
	for (char **p = info->inherits; *p; p++)
		if (!**p)
			abort();
	theme_info_free(info);
	return 0;
}
