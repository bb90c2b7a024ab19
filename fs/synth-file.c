/* The synthesized index.theme and icon-theme.cache; see synth-file.h. */
#include <stdbool.h>
#include <string.h>

#include "iconcache.h"
#include "lookup-chain.h"
#include "macro.h"
#include "synth-file.h"
#include "theme.h"
#include "view.h"

/* Whether GTK (3.24 and 4) ships built-in icons under the hicolor
 * directory `path`: `gresource list` of libgtk-3 and libgtk-4 shows them in
 * these sizes and contexts only. Listing all of hicolor's ~660 directories
 * cost GTK 4's theme set-up ~30% more CPU (Papirus, one lookup: 357-437 ->
 * 475-609 ms, stock 175-201 ms); these 56 are what its resources need. */
static bool gtk_builtin_dir(const char *path)
{
	static const char *const sizes[] = { "16x16", "22x22", "24x24", "32x32",
					     "48x48", "64x64", "scalable" };
	static const char *const contexts[] = { "actions", "categories", "devices",
						"emblems", "emotes",     "mimetypes",
						"places",  "status" };
	const char *slash = strchr(path, '/');
	bool size = false;

	if (!slash)
		return false;
	for (size_t i = 0; i < ELEMENTSOF(sizes); i++)
		size |= strlen(sizes[i]) == (size_t)(slash - path) &&
			strncmp(path, sizes[i], slash - path) == 0;
	for (size_t i = 0; size && i < ELEMENTSOF(contexts); i++)
		if (streq(slash + 1, contexts[i]))
			return true;
	return false;
}

/* A real directory's group, as its theme's own index.theme describes it
 * (its name has a '/': never one of the synthesized views'). */
static void index_theme_dir(GKeyFile *kf, const struct lookup_dir *d)
{
	static const char *const types[] = { [THEME_DIR_FIXED] = "Fixed",
					     [THEME_DIR_SCALABLE] = "Scalable",
					     [THEME_DIR_THRESHOLD] = "Threshold" };

	if (d->type < 0 || d->type >= (int)ELEMENTSOF(types))
		return;
	g_key_file_set_integer(kf, d->path, "Size", d->size);
	if (d->scale != 1)
		g_key_file_set_integer(kf, d->path, "Scale", d->scale);
	g_key_file_set_string(kf, d->path, "Type", types[d->type]);
	if (d->type == THEME_DIR_SCALABLE) {
		g_key_file_set_integer(kf, d->path, "MinSize", d->min_size);
		g_key_file_set_integer(kf, d->path, "MaxSize", d->max_size);
	} else if (d->type == THEME_DIR_THRESHOLD) {
		g_key_file_set_integer(kf, d->path, "Threshold", d->threshold);
	}
}

/* KDE reads the sizes of its icon groups (DesktopDefault, ...) and
 * FollowsColorScheme from [Icon Theme]: the theme's own values, which
 * KDE's parser reads back as it read them from the theme. */
static int index_theme_kde_keys(GKeyFile *kf, struct lookup *l,
				const char *theme)
{
	g_autofree char *keys = NULL;
	g_auto(GStrv) lines = NULL;
	int r;

	r = lookup_theme_kde_keys(l, theme, &keys);
	if (r < 0)
		return r;
	lines = g_strsplit(keys, "\n", -1);
	for (char **line = lines; *line; line++) {
		char *eq = strchr(*line, '=');

		if (!eq)
			continue;
		*eq = '\0';
		g_key_file_set_value(kf, "Icon Theme", *line, eq + 1);
	}
	return 0;
}

/* [Icon Theme]'s Name, Comment, Example, Inherits and, under kde, the
 * theme's KDE keys. */
static int index_theme_head(GKeyFile *kf, struct lookup *l, const char *theme)
{
	g_autofree char *name = NULL, *comment = NULL, *example = NULL;
	const char *top = "Icon Theme";
	int r;

	r = lookup_theme_info(l, theme, &name, &comment, &example);
	if (r < 0)
		return r;
	g_key_file_set_string(kf, top, "Name", *name ? name : theme);
	if (*comment)
		g_key_file_set_string(kf, top, "Comment", comment);
	if (*example)
		g_key_file_set_string(kf, top, "Example", example);
	g_key_file_set_string(kf, top, "Inherits", "hicolor");
	if (lookup_rules(l) == LOOKUP_RULES_KDE)
		return index_theme_kde_keys(kf, l, theme);
	return 0;
}

/* A group per size view (`dirs` names those of `sizes`, `scaled` the @2
 * ones of `scaled_sizes`, in their order) and scalable/'s. */
static void index_theme_views(GKeyFile *kf, GArray *sizes, GPtrArray *dirs,
			      GArray *scaled_sizes, GPtrArray *scaled)
{
	for (unsigned i = 0; i < sizes->len; i++) {
		g_key_file_set_integer(kf, dirs->pdata[i], "Size",
				       g_array_index(sizes, int, i));
		g_key_file_set_string(kf, dirs->pdata[i], "Type", "Fixed");
	}
	for (unsigned i = 0; i < scaled_sizes->len; i++) {
		g_key_file_set_integer(kf, scaled->pdata[i], "Size",
				       g_array_index(scaled_sizes, int, i));
		g_key_file_set_integer(kf, scaled->pdata[i], "Scale", 2);
		g_key_file_set_string(kf, scaled->pdata[i], "Type", "Fixed");
	}
	g_key_file_set_integer(kf, "scalable", "Size", 16);
	g_key_file_set_integer(kf, "scalable", "MinSize", 1);
	g_key_file_set_integer(kf, "scalable", "MaxSize", 1024);
	g_key_file_set_string(kf, "scalable", "Type", "Scalable");
}

/* Written by GKeyFile, so that values from the theme's own file (Name,
 * Comment, Example) are escaped as GKeyFile (and so every toolkit) reads
 * them back: an escaped newline cannot start a group of its own. */
int synth_file_index_theme(struct synth *s, struct lookup *l, const char *theme,
			   GBytes **ret)
{
	g_autoptr(GKeyFile) kf = g_key_file_new();
	g_autoptr(GArray) sizes = NULL, scaled_sizes = NULL;
	g_autoptr(GPtrArray) dirs = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) scaled = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GArray) real = NULL;
	const char *top = "Icon Theme";
	char *list, *text;
	gsize len;
	int r;

	(void)s;
	r = index_theme_head(kf, l, theme);
	if (r >= 0)
		r = synth_sizes(l, theme, &sizes);
	if (r >= 0)
		r = synth_scaled_sizes(l, theme, &scaled_sizes);
	if (r < 0)
		return r;
	for (unsigned i = 0; i < sizes->len; i++) {
		int n = g_array_index(sizes, int, i);

		g_ptr_array_add(dirs, g_strdup_printf("%dx%d", n, n));
	}
	for (unsigned i = 0; i < scaled_sizes->len; i++) {
		int n = g_array_index(scaled_sizes, int, i);

		g_ptr_array_add(scaled, g_strdup_printf("%dx%d@2", n, n));
	}
	g_ptr_array_add(dirs, g_strdup("scalable"));
	if (streq(theme, "hicolor") && lookup_rules(l) == LOOKUP_RULES_GTK) {
		r = lookup_theme_dirs(l, theme, &real);
		if (r < 0)
			return r;
		for (unsigned i = 0; i < real->len; i++) {
			const char *path = g_array_index(real, struct lookup_dir, i).path;

			if (gtk_builtin_dir(path))
				g_ptr_array_add(dirs, g_strdup(path));
		}
	}
	g_ptr_array_add(dirs, NULL);
	g_ptr_array_add(scaled, NULL);
	/* comma-separated, as the specification writes lists (GKeyFile's
	 * own lists end with a separator) */
	list = g_strjoinv(",", (char **)dirs->pdata);
	g_key_file_set_string(kf, top, "Directories", list);
	g_free(list);
	if (scaled_sizes->len > 0) {
		list = g_strjoinv(",", (char **)scaled->pdata);
		g_key_file_set_string(kf, top, "ScaledDirectories", list);
		g_free(list);
	}
	index_theme_views(kf, sizes, dirs, scaled_sizes, scaled);
	for (unsigned i = 0; real && i < real->len; i++)
		if (gtk_builtin_dir(g_array_index(real, struct lookup_dir, i).path))
			index_theme_dir(kf, &g_array_index(real, struct lookup_dir, i));
	text = g_key_file_to_data(kf, &len, NULL);
	*ret = g_bytes_new_take(text, len);
	return 0;
}

/* synth.h: under gtk and qt the cache holds every name at these, besides
 * the sizes its own theme has it at (the sizes GTK's icon_list_from_theme
 * loads a window icon at, and what a file manager's zoom steps ask). Also
 * where the size's lookup picks the file
 * scalable/ serves, which GTK would draw alike: Qt draws an SVG with its
 * own renderer, so GTK 3 and Qt would show other pixels there. Dropping those
 * pairs (Papirus 180,883 -> 162,836, breeze 39,619 -> 30,734) took GTK 4's
 * start to first window from 0.76-0.78x stock's instructions to 0.72-0.73x
 * (Papirus) and from 1.00-1.07x to 0.94-1.00x (breeze), and GTK 3 and Qt 6
 * from 1,420 to 1,156 of 1,422 lookups alike (test_fidelity.py). */
const int synth_asked_sizes[] = { 16, 22, 24, 32, 48, 64, 96, 128 };
const unsigned synth_n_asked_sizes = ELEMENTSOF(synth_asked_sizes);

/* Whether a name of `own` (lookup_name_sizes: struct lookup_size) goes
 * in a directory of pixel size `px`: an asked size, or one of its own. */
static bool px_wanted(int px, GArray *own)
{
	for (unsigned i = 0; i < synth_n_asked_sizes; i++)
		if (synth_asked_sizes[i] == px)
			return true;
	for (guint i = 0; own && i < own->len; i++) {
		const struct lookup_size *z =
			&g_array_index(own, struct lookup_size, i);

		if (lookup_size_px(z) == px)
			return true;
	}
	return false;
}

/* ... in an N×N@2 view under gtk (synth_scaled_sizes): where a Scale=2
 * directory of Size N holds it (Scalable or not). */
static bool scaled_wanted(int n, GArray *own)
{
	for (guint i = 0; own && i < own->len; i++) {
		const struct lookup_size *z =
			&g_array_index(own, struct lookup_size, i);

		if (z->size == n && z->scale == 2)
			return true;
	}
	return false;
}

/* Whether size view `v` (struct lookup_size) lists a name of `own`: an
 * @2 one under gtk where scaled_wanted() says, any other by its pixels
 * (px_wanted). */
static bool view_wanted(const struct lookup_size *v, bool gtk, GArray *own)
{
	if (gtk && v->scale == 2)
		return scaled_wanted(v->size, own);
	return px_wanted(v->size * v->scale, own);
}

/* Each of `names` into `extra`, in the size views (`views`, struct
 * lookup_size, in the cache's order) view_wanted() says for it with its
 * own theme's directories (`own`, lookup_name_sizes); each directory index
 * with `flag`. */
static void names_at_sizes(GPtrArray *names, GHashTable *own, GArray *views,
			   bool gtk, guint flag, GHashTable *extra)
{
	for (guint i = 0; names && i < names->len; i++) {
		GArray *in = g_array_new(FALSE, FALSE, sizeof(guint));
		GArray *sizes = g_hash_table_lookup(own, names->pdata[i]);

		for (guint d = 0; d < views->len; d++) {
			guint v = d | flag;

			if (view_wanted(&g_array_index(views, struct lookup_size, d),
					gtk, sizes))
				g_array_append_val(in, v);
		}
		g_hash_table_insert(extra, names->pdata[i], in);
	}
}

/* Under gtk and qt, what the cache lists of each name of `png` and (qt)
 * of `sized` (its SVGs in the size views): the asked sizes and its own
 * theme's, not every listed size. GTK 4 hashes every (directory, name)
 * pair of the cache when it sets a theme up, and GTK 3 and Qt load a
 * window icon at every size a name is listed at: with all 20 sizes of
 * Papirus's chain for every name, a GTK 4 app started 1.25x stock; as
 * stock lists them, no slower. Qt's loader looks for the file in every
 * directory the cache lists a name in, a .png and then a .svg: pcmanfm-qt
 * sent 2,560 lookups at its start after a mount with every size listed,
 * 409 under gtk's listing. A request at a size not listed for a name goes
 * where it goes without the mount: to the nearest size its theme has, or
 * to scalable/. The size views still list every name (`ls`), and any
 * size still resolves when named. `png` is emptied; `sized` is left as
 * it is. */
static int cache_sizes(struct lookup *l, const char *theme, GPtrArray *png,
		       GPtrArray *sized, GArray *views, GHashTable *extra)
{
	bool gtk = lookup_rules(l) == LOOKUP_RULES_GTK;
	g_autoptr(GHashTable) own = NULL;
	int r;

	r = lookup_name_sizes(l, theme, &own);
	if (r < 0)
		return r;
	names_at_sizes(png, own, views, gtk, 0, extra);
	names_at_sizes(sized, own, views, gtk, ICONCACHE_SVG, extra);
	g_ptr_array_set_size(png, 0);
	return 0;
}

/* The "PX NAME" `entries` into `extra` (iconcache.h): each name in the
 * scale-1 size views of that PX (`views`, struct lookup_size), with `flag`;
 * none in an @2 one (with the names of their pixel size there, GTK 3 and 4
 * took 24x24@2's at 20 px, where stock draws the SVG). */
static void extra_add(GHashTable *extra, GPtrArray *entries, GArray *views,
		      guint flag)
{
	for (unsigned i = 0; i < entries->len; i++)
		for (guint d = 0; d < views->len; d++) {
			const struct lookup_size *z =
				&g_array_index(views, struct lookup_size, d);
			const char *name =
				z->scale != 1 ? NULL
					      : synth_entry_at(entries->pdata[i],
							       (unsigned)z->size);
			guint v = d | flag;
			GArray *in;

			if (!name)
				continue;
			in = g_hash_table_lookup(extra, name);
			if (!in) {
				in = g_array_new(FALSE, FALSE, sizeof(guint));
				g_hash_table_insert(extra, (gpointer)name, in);
			}
			g_array_append_val(in, v);
		}
}

/* The size views of `sizes` at `scale` (1 or 2) after the cache's others:
 * their names into `dirs`, their Size and Scale into `views`. */
static void cache_views_add(GPtrArray *dirs, GArray *views, GArray *sizes,
			    int scale)
{
	for (unsigned i = 0; i < sizes->len; i++) {
		struct lookup_size v = { g_array_index(sizes, int, i), scale,
					 false };

		g_ptr_array_add(dirs, scale == 1 ? g_strdup_printf("%dx%d",
								   v.size, v.size)
						 : g_strdup_printf("%dx%d@2",
								   v.size, v.size));
		g_array_append_val(views, v);
	}
}

int synth_file_icon_cache(struct synth *s, struct lookup *l, const char *theme,
			  GBytes **ret)
{
	g_autoptr(GArray) sizes = NULL, scaled_sizes = NULL;
	g_autoptr(GPtrArray) dirs = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) names = NULL, svg = NULL, symbolic = NULL;
	g_autoptr(GPtrArray) variants = NULL, sized = NULL;
	g_autoptr(GPtrArray) png = g_ptr_array_new();
	g_autoptr(GArray) views = g_array_new(FALSE, FALSE,
					      sizeof(struct lookup_size));
	/* a name some size dirs hold → those dirs (guint, iconcache.h) */
	g_autoptr(GHashTable) extra = g_hash_table_new_full(
		g_str_hash, g_str_equal, NULL, (GDestroyNotify)g_array_unref);
	GByteArray *out;
	int r;

	r = synth_sizes(l, theme, &sizes);
	if (r >= 0)
		r = synth_scaled_sizes(l, theme, &scaled_sizes);
	if (r >= 0)
		r = synth_names(s, l, theme, false, &names);
	if (r >= 0)
		r = synth_names(s, l, theme, true, &svg);
	if (r >= 0)
		r = synth_symbolic_pngs(s, l, theme, &symbolic);
	if (r >= 0)
		r = synth_symbolic_svgs(s, l, theme, &variants);
	if (r >= 0)
		r = synth_sized_svgs(s, l, theme, &sized);
	if (r < 0)
		return r;
	cache_views_add(dirs, views, sizes, 1);
	cache_views_add(dirs, views, scaled_sizes, 2);
	g_ptr_array_add(dirs, g_strdup("scalable"));
	for (unsigned i = 0; i < names->len; i++)
		if (!view_is_symbolic(names->pdata[i]) &&
		    !synth_list_has(sized, names->pdata[i]))
			g_ptr_array_add(png, names->pdata[i]);
	extra_add(extra, symbolic, views, 0);
	if (lookup_rules(l) == LOOKUP_RULES_GTK) {
		extra_add(extra, variants, views, ICONCACHE_SVG);
		r = cache_sizes(l, theme, png, NULL, views, extra);
	} else if (lookup_rules(l) == LOOKUP_RULES_QT)
		r = cache_sizes(l, theme, png, sized, views, extra);
	if (r < 0)
		return r;
	out = g_byte_array_new();
	iconcache_build(dirs, png, svg,
			lookup_rules(l) == LOOKUP_RULES_QT ? NULL : sized, extra,
			out);
	*ret = g_byte_array_free_to_bytes(out);
	return 0;
}
