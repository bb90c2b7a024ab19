/* The enums the index's rows store (icon.ext, dir.kind), shared by the
 * scanner that writes them and the queries that read them. Owns nothing. */
#pragma once

/* Icon file formats, in the specification's order of preference; stored as
 * icon.ext and bound as such. */
enum icon_ext {
	ICON_EXT_PNG = 0,
	ICON_EXT_SVG = 1,
	ICON_EXT_XPM = 2,
};

/* "png" → ICON_EXT_PNG ...; -1 for any other file-name extension. */
int icon_ext_from_name(const char *ext);
const char *icon_ext_name(int ext);

/* What a row of `dir` is; stored as dir.kind and bound as such. */
enum dir_kind {
	DIR_KIND_BASE = 0,   /* a base directory (unthemed fallback icons) */
	DIR_KIND_ROOT = 1,   /* a theme's root in one base directory */
	DIR_KIND_SUBDIR = 2, /* a listed subdirectory of a theme */
};
