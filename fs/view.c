/* Name grammar of the mounted tree; see view.h. */
#include <errno.h>
#include <glib.h>
#include <limits.h>
#include <string.h>

#include "lookup.h"
#include "macro.h"
#include "view.h"

const int view_listed_sizes[] = { 16, 22, 24, 32, 48, 64, 96, 128, 256, 512 };
const unsigned view_n_listed_sizes = G_N_ELEMENTS(view_listed_sizes);

/* Parse a canonical decimal in [min, max] at *s, advancing *s. */
static int parse_number(const char **s, int min, int max, int *ret)
{
	const char *p = *s;
	long v = 0;

	if (*p < '1' || *p > '9')
		return -ENOENT;
	while (*p >= '0' && *p <= '9') {
		v = v * 10 + (*p - '0');
		if (v > max)
			return -ENOENT;
		p++;
	}
	if (v < min)
		return -ENOENT;
	*s = p;
	*ret = (int)v;
	return 0;
}

static int parse_scale_suffix(const char *p, int max, int *ret_scale)
{
	if (*p == '\0') {
		*ret_scale = 1;
		return 0;
	}
	if (*p != '@')
		return -ENOENT;
	p++;
	if (parse_number(&p, 1, max, ret_scale) < 0 || *p)
		return -ENOENT;
	return 0;
}

int view_parse_flat_dir(const char *s, int *ret_size, int *ret_scale)
{
	int size, scale;

	if (parse_number(&s, 1, VIEW_SIZE_MAX, &size) < 0 ||
	    parse_scale_suffix(s, VIEW_SCALE_MAX, &scale) < 0)
		return -ENOENT;
	/* one name per directory: "48", never "48@1" */
	if (scale == 1 && *s)
		return -ENOENT;
	*ret_size = size;
	*ret_scale = scale;
	return 0;
}

int view_parse_theme_dir(const char *s, int *ret_size, int *ret_scale)
{
	int w, h, scale;

	if (parse_number(&s, 1, VIEW_SIZE_MAX, &w) < 0 || *s++ != 'x' ||
	    parse_number(&s, 1, VIEW_SIZE_MAX, &h) < 0 || w != h ||
	    parse_scale_suffix(s, 2, &scale) < 0)
		return -ENOENT;
	/* "@1" is not canonical: 48x48 is the Scale=1 directory */
	if (scale == 1 && *s)
		return -ENOENT;
	*ret_size = w;
	*ret_scale = scale;
	return 0;
}

int view_parse_icon_file(const char *s, const char *ext, char **ret_name)
{
	size_t n = strnlen(s, NAME_MAX + 1), e = strlen(ext);
	g_autofree char *name = NULL;

	if (n > NAME_MAX)
		return -ENAMETOOLONG;
	if (n < e + 2 || s[n - e - 1] != '.' || strcmp(s + n - e, ext) != 0)
		return -ENOENT;
	name = g_strndup(s, n - e - 1);
	if (!lookup_name_valid(name))
		return -ENOENT;
	*ret_name = g_steal_pointer(&name);
	return 0;
}

bool view_is_symbolic(const char *name)
{
	static const char *const suffixes[] = { "-symbolic", "-symbolic-ltr",
						"-symbolic-rtl" };
	size_t n = strlen(name);

	/* GTK's pre-rendered "<name>.symbolic.png" of a symbolic name counts
	 * too: served as PNG it would shadow the SVG in scalable/. */
	if (n > 9 && streq(name + n - 9, ".symbolic"))
		n -= 9;
	for (size_t i = 0; i < ELEMENTSOF(suffixes); i++) {
		size_t k = strlen(suffixes[i]);

		if (n >= k && strncmp(name + n - k, suffixes[i], k) == 0)
			return true;
	}
	return false;
}

bool view_is_symbolic_png(const char *name)
{
	size_t n = strlen(name);

	return n > 9 && streq(name + n - 9, ".symbolic") && view_is_symbolic(name);
}

int view_nominal_size(const char *name)
{
	return view_is_symbolic(name) ? 16 : 48;
}

int view_parse_entry(enum tree_kind dir, const char *theme, int size,
		     int scale, const char *default_theme, const char *name,
		     struct view_entry *ret)
{
	struct view_entry e = { .size = 0, .scale = 0 };
	int r;

	switch (dir) {
	case TREE_ROOT:
		if (streq(name, VIEW_ICONS_DIR)) {
			e.kind = TREE_ICONS;
			break;
		}
		if (view_parse_flat_dir(name, &e.size, &e.scale) < 0)
			return -ENOENT;
		e.kind = TREE_FLATDIR;
		e.theme = g_strdup(default_theme);
		break;
	case TREE_ICONS:
		if (!lookup_name_valid(name))
			return -ENOENT;
		e.kind = TREE_THEME;
		e.theme = g_strdup(name);
		break;
	case TREE_THEME:
		if (streq(name, VIEW_INDEX_THEME))
			e.kind = TREE_INDEX_THEME;
		else if (streq(name, VIEW_ICON_CACHE))
			e.kind = TREE_ICON_CACHE;
		else if (streq(name, VIEW_SCALABLE))
			e.kind = TREE_SCALABLE;
		else if (view_parse_theme_dir(name, &e.size, &e.scale) == 0)
			e.kind = TREE_SIZEDIR;
		else
			return -ENOENT;
		e.theme = g_strdup(theme);
		break;
	case TREE_SIZEDIR:
	case TREE_FLATDIR:
	case TREE_SCALABLE:
		r = view_parse_icon_file(
			name, dir == TREE_SCALABLE ? "svg" : "png", &e.name);
		e.kind = dir == TREE_SCALABLE ? TREE_SVG : TREE_ICON;
		if (r == -ENOENT && dir == TREE_SIZEDIR) {
			r = view_parse_icon_file(name, "svg", &e.name);
			e.kind = TREE_SVG;
		}
		if (r < 0)
			return r;
		if (e.kind == TREE_ICON && dir == TREE_SIZEDIR &&
		    view_is_symbolic(e.name) &&
		    (scale != 1 || !view_is_symbolic_png(e.name))) {
			g_free(e.name);
			return -ENOENT;
		}
		e.theme = g_strdup(theme);
		e.size = size;
		e.scale = scale;
		break;
	default:
		return -ENOTDIR;
	}
	*ret = e;
	return 0;
}

void view_entry_clear(struct view_entry *e)
{
	g_free(e->theme);
	g_free(e->name);
	*e = (struct view_entry){ 0 };
}
