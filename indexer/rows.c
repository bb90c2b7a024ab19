/* The rows' enums; see rows.h. */
#include <string.h>

#include "macro.h"
#include "rows.h"

static const char *const ext_names[] = { "png", "svg", "xpm" };

int icon_ext_from_name(const char *ext)
{
	for (size_t i = 0; i < ELEMENTSOF(ext_names); i++)
		if (streq(ext, ext_names[i]))
			return (int)i;
	return -1;
}

const char *icon_ext_name(int ext)
{
	return ext >= 0 && ext < (int)ELEMENTSOF(ext_names) ? ext_names[ext]
							    : "";
}
