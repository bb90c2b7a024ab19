/* Directory listings; see listing.h. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "listing.h"
#include "view.h"

/* Tries before a listing built while the index keeps changing is given as
 * it is. */
#define LISTING_TRIES 8

static void listing_add(struct listing *ls, char *name, unsigned char type)
{
	g_ptr_array_add(ls->names, name);
	g_array_append_val(ls->types, type);
}

void listing_free(struct listing *ls)
{
	if (!ls)
		return;
	g_ptr_array_unref(ls->names);
	g_array_unref(ls->types);
	if (ls->icons)
		g_ptr_array_unref(ls->icons);
	if (ls->icon_src)
		g_ptr_array_unref(ls->icon_src);
	if (ls->symbolic_src)
		g_ptr_array_unref(ls->symbolic_src);
	g_array_unref(ls->inos);
	g_free(ls);
}

unsigned listing_count(const struct listing *ls)
{
	return ls->names->len + (ls->icons ? ls->icons->len : 0);
}

const char *listing_entry(const struct listing *ls, unsigned i, char *buf,
			  unsigned char *ret_type, uint64_t *ret_ino)
{
	*ret_ino = g_array_index(ls->inos, uint64_t, i);
	if (i < ls->names->len) {
		*ret_type = g_array_index(ls->types, unsigned char, i);
		return ls->names->pdata[i];
	}
	*ret_type = DT_REG;
	(void)g_snprintf(buf, NAME_MAX + 1, "%s%s",
			 (const char *)ls->icons->pdata[i - ls->names->len],
			 ls->suffix);
	return buf;
}

static void list_root(struct listing *ls)
{
	listing_add(ls, g_strdup(VIEW_ICONS_DIR), DT_DIR);
	for (int s = 1; s <= 2; s++)
		for (unsigned i = 0; i < view_n_listed_sizes; i++)
			listing_add(ls,
				    s == 1 ? g_strdup_printf(
						     "%d", view_listed_sizes[i])
					   : g_strdup_printf(
						     "%d@%d",
						     view_listed_sizes[i], s),
				    DT_DIR);
}

static int list_themes(struct request *x, struct listing *ls)
{
	g_autoptr(GPtrArray) themes = NULL;
	int r = lookup_themes(x->l, &themes);

	for (unsigned i = 0; r >= 0 && i < themes->len; i++)
		listing_add(ls, g_strdup(themes->pdata[i]), DT_DIR);
	return r;
}

static int list_theme(struct request *x, const char *theme, struct listing *ls)
{
	g_autoptr(GArray) sizes = NULL;
	int r;

	listing_add(ls, g_strdup(VIEW_INDEX_THEME), DT_REG);
	listing_add(ls, g_strdup(VIEW_ICON_CACHE), DT_REG);
	listing_add(ls, g_strdup(VIEW_SCALABLE), DT_DIR);
	r = synth_sizes(x->l, theme, &sizes);
	for (unsigned i = 0; r >= 0 && i < sizes->len; i++) {
		int s = g_array_index(sizes, int, i);

		listing_add(ls, g_strdup_printf("%dx%d", s, s), DT_DIR);
		listing_add(ls, g_strdup_printf("%dx%d@2", s, s), DT_DIR);
	}
	return r;
}

/* The SVGs a size view holds as the sources' own bytes (tree.c): under
 * kde and qt the names of synth_sized_svgs() (`svg`), in every size view;
 * under gtk the symbolic names' per-size variants at their size (scale 1).
 * Named into ls->names. */
static int list_sizedir_svgs(struct request *x, const struct tree_node *dir,
			     GPtrArray *svg, struct listing *ls)
{
	g_autoptr(GPtrArray) variants = NULL;
	int r;

	if (lookup_rules(x->l) == LOOKUP_RULES_GTK) {
		if (dir->scale != 1)
			return 0;
		r = synth_symbolic_svgs(x->synth, x->l, dir->theme, &variants);
		if (r < 0)
			return r;
		for (unsigned i = 0; i < variants->len; i++) {
			const char *n = synth_entry_at(variants->pdata[i],
						       (unsigned)dir->size);

			if (n)
				listing_add(ls, g_strconcat(n, ".svg", NULL), DT_REG);
		}
		return 0;
	}
	for (unsigned i = 0; i < svg->len; i++)
		if (strlen(svg->pdata[i]) + 4 <= NAME_MAX)
			listing_add(ls, g_strconcat(svg->pdata[i], ".svg", NULL),
				    DT_REG);
	return 0;
}

/* Icons: symbolic names under icons/ as SVG, and in a size view as GTK's
 * pre-encoded NAME.symbolic.png where the theme has one of exactly that
 * size (toolkits recolour both) and as a per-size SVG variant; under kde
 * and qt the icons whose source is an SVG as SVG in the size views;
 * rendered like any other in the flat views. */
static int list_icons(struct tree *t, struct request *x, struct prefetch *pf,
		      uint64_t ino, const struct tree_node *dir,
		      struct listing *ls)
{
	bool svg = dir->kind == TREE_SCALABLE;
	g_autoptr(GPtrArray) names = NULL, sized = NULL;
	g_autoptr(GPtrArray) rendered = NULL;
	int r;

	r = synth_names(x->synth, x->l, dir->theme, svg, &names);
	if (r >= 0 && dir->kind == TREE_SIZEDIR)
		r = synth_sized_svgs(x->synth, x->l, dir->theme, &sized);
	if (r >= 0 && dir->kind == TREE_SIZEDIR)
		r = list_sizedir_svgs(x, dir, sized, ls);
	if (r < 0)
		return r;
	ls->icon_src = g_ptr_array_ref(names);
	ls->icons = g_ptr_array_sized_new(names->len);
	ls->suffix = svg ? ".svg" : ".png";
	for (unsigned i = 0; i < names->len; i++) {
		const char *n = names->pdata[i];

		/* names too long for an entry are not listed (ENAMETOOLONG) */
		if ((dir->kind == TREE_SIZEDIR &&
		     (view_is_symbolic(n) || synth_list_has(sized, n))) ||
		    strlen(n) + 4 > NAME_MAX)
			continue;
		g_ptr_array_add(ls->icons, (gpointer)n);
	}
	if (dir->kind == TREE_SIZEDIR && dir->scale == 1) {
		unsigned px = (unsigned)dir->size;

		r = synth_symbolic_pngs(x->synth, x->l, dir->theme,
					&ls->symbolic_src);
		if (r < 0)
			return r;
		for (unsigned i = 0; i < ls->symbolic_src->len; i++) {
			const char *n = synth_entry_at(
				ls->symbolic_src->pdata[i], px);

			if (n && strlen(n) + 4 <= NAME_MAX)
				g_ptr_array_add(ls->icons, (gpointer)n);
		}
	}
	/* rendered ahead once a program stats one of them, not before (not
	 * those served as SVG) */
	rendered = g_ptr_array_ref(names);
	if (dir->kind == TREE_SIZEDIR && sized->len > 0) {
		g_ptr_array_unref(rendered);
		rendered = g_ptr_array_new_with_free_func(g_free);
		for (unsigned i = 0; i < names->len; i++)
			if (!synth_list_has(sized, names->pdata[i]))
				g_ptr_array_add(rendered, g_strdup(names->pdata[i]));
	}
	if (pf && !svg)
		prefetch_listed(pf, ino, dir->theme, dir->size, dir->scale,
				rendered, dir->kind == TREE_SIZEDIR,
				generation_now(x->generation));
	return 0;
}

static int listing_build_once(struct tree *t, struct request *x,
			      struct prefetch *pf, uint64_t ino,
			      struct listing **ret)
{
	struct listing *ls = g_new0(struct listing, 1);
	struct tree_node dir = { 0 };
	int r;

	ls->names = g_ptr_array_new_with_free_func(g_free);
	ls->types = g_array_new(FALSE, FALSE, 1);
	ls->inos = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	r = tree_node_get(t, ino, &dir, NULL);
	if (r >= 0) {
		listing_add(ls, g_strdup("."), DT_DIR);
		listing_add(ls, g_strdup(".."), DT_DIR);
		switch (dir.kind) {
		case TREE_ROOT:
			list_root(ls);
			break;
		case TREE_ICONS:
			r = list_themes(x, ls);
			break;
		case TREE_THEME:
			r = list_theme(x, dir.theme, ls);
			break;
		case TREE_SIZEDIR:
		case TREE_FLATDIR:
		case TREE_SCALABLE:
			r = list_icons(t, x, pf, ino, &dir, ls);
			break;
		default:
			r = -ENOTDIR;
		}
	}
	if (r >= 0)
		tree_number(t, &dir, ls->names, ls->icons, ls->inos);
	tree_node_clear(&dir);
	if (r < 0) {
		listing_free(ls);
		return r;
	}
	*ret = ls;
	return 0;
}

int listing_build(struct tree *t, struct request *x, struct prefetch *pf,
		  uint64_t ino, struct listing **ret)
{
	for (int tries = 1;; tries++) {
		uint64_t gen = generation_now(x->generation);
		int r = listing_build_once(t, x, pf, ino, ret);

		if (r < 0 || generation_now(x->generation) == gen ||
		    tries == LISTING_TRIES)
			return r;
		listing_free(*ret);
	}
}
