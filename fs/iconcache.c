/* Writing icon-theme.cache; see iconcache.h. Layout:
 *   header     u16 major (1), u16 minor (0), u32 hash offset, u32 dir list
 *   hash       u32 n_buckets, u32 first icon per bucket (~0 when empty)
 *   icons      u32 next in chain, u32 name offset, u32 image list offset
 *   images     u32 n, then per image u16 dir index, u16 flags, u32 0
 *   dir list   u32 n, u32 name offset each
 *   strings */
#include <stdbool.h>
#include <string.h>

#include "iconcache.h"

#define SUFFIX_SVG 2
#define SUFFIX_PNG 4
#define NONE	   0xffffffffu

/* The hash GTK uses: h = h * 31 + c over signed chars. */
static guint32 cache_hash(const char *s)
{
	const signed char *p = (const signed char *)s;
	guint32 h = (guint32)*p;

	if (h)
		for (p++; *p; p++)
			h = (h << 5) - h + (guint32)*p;
	return h;
}

static void put32(GByteArray *b, guint32 off, guint32 v)
{
	b->data[off] = v >> 24;
	b->data[off + 1] = v >> 16;
	b->data[off + 2] = v >> 8;
	b->data[off + 3] = v;
}

static guint32 get32(const GByteArray *b, guint32 off)
{
	const guint8 *p = b->data + off;

	return (guint32)p[0] << 24 | (guint32)p[1] << 16 | (guint32)p[2] << 8 |
	       p[3];
}

static guint32 append32(GByteArray *b, guint32 v)
{
	guint32 off = b->len;

	g_byte_array_set_size(b, b->len + 4);
	put32(b, off, v);
	return off;
}

static void append16(GByteArray *b, guint16 v)
{
	guint8 x[2] = { v >> 8, v & 0xff };
	g_byte_array_append(b, x, 2);
}

/* A NUL-terminated string padded to 4 bytes: Qt's reader
 * (QIconCacheGtkReader) takes a cache with any 32-bit value off its
 * 4-byte alignment for a broken one, and then probes every directory the
 * index.theme lists (as gtk-update-icon-cache, every offset aligned). */
static guint32 append_str(GByteArray *b, const char *s)
{
	static const guint8 zeros[4];
	guint32 off = b->len;
	gsize n = strlen(s) + 1;

	g_byte_array_append(b, (const guint8 *)s, (guint)n);
	g_byte_array_append(b, zeros, (guint)((4 - n % 4) % 4));
	return off;
}

/* One image of a list: the directory's index and the file's suffix. */
static void append_image(GByteArray *b, guint dir, guint16 flags)
{
	append16(b, (guint16)dir);
	append16(b, flags);
	append32(b, 0);
}

/* An image list naming dirs [first, last) with `flags`, then scalable/
 * when `with_svg`. */
static guint32 append_images(GByteArray *b, guint first, guint last,
			     guint16 flags, guint scalable, bool with_svg)
{
	guint32 off = append32(b, last - first + (with_svg ? 1 : 0));

	for (guint i = first; i < last; i++)
		append_image(b, i, flags);
	if (with_svg)
		append_image(b, scalable, SUFFIX_SVG);
	return off;
}

/* An image list naming the dirs `in` (iconcache.h's `extra` entries),
 * then scalable/ when `with_svg`; one list for all the names that name the
 * same dirs (`lists`: the lists written, by content). */
static guint32 append_images_in(GByteArray *b, GHashTable *lists, GArray *in,
				guint scalable, bool with_svg)
{
	g_autoptr(GByteArray) key = g_byte_array_sized_new(in->len * 4 + 1);
	GBytes *k;
	gpointer found;
	guint32 off;
	guint8 svg = with_svg;

	g_byte_array_append(key, (const guint8 *)in->data, in->len * sizeof(guint));
	g_byte_array_append(key, &svg, 1);
	k = g_byte_array_free_to_bytes(g_steal_pointer(&key));
	if (g_hash_table_lookup_extended(lists, k, NULL, &found)) {
		g_bytes_unref(k);
		return GPOINTER_TO_UINT(found);
	}
	off = append32(b, in->len + (with_svg ? 1 : 0));
	for (guint i = 0; i < in->len; i++) {
		guint d = g_array_index(in, guint, i);

		append_image(b, d & ~ICONCACHE_SVG,
			     d & ICONCACHE_SVG ? SUFFIX_SVG : SUFFIX_PNG);
	}
	if (with_svg)
		append_image(b, scalable, SUFFIX_SVG);
	g_hash_table_insert(lists, k, GUINT_TO_POINTER(off));
	return off;
}

/* Names in the order of their hash buckets: GTK 4 walks every chain of
 * the cache once per directory it sets up, which then reads the icons,
 * their names and their image lists front to back. */
static int bucket_cmp(gconstpointer a, gconstpointer b, gpointer n_buckets)
{
	guint32 n = *(const guint32 *)n_buckets;
	guint32 x = cache_hash(*(const char *const *)a) % n;
	guint32 y = cache_hash(*(const char *const *)b) % n;

	return x < y ? -1 : x > y;
}

/* The icons of `all`, sorted into bucket order, each chain front to back
 * from the hash table at `hash_off` (its heads ~0 yet): their 12-byte entries with the next
 * link set, names and image lists left to the caller. Returns the offset
 * of the first entry. */
static guint32 append_chains(GByteArray *b, GPtrArray *all, guint32 n_buckets,
			     guint32 hash_off)
{
	guint32 icons_off;

	g_ptr_array_sort_with_data(all, bucket_cmp, &n_buckets);
	icons_off = b->len;
	g_byte_array_set_size(b, b->len + 12 * all->len);
	for (guint i = all->len; i-- > 0;) {
		guint32 head = hash_off + 4 + 4 * (cache_hash(all->pdata[i]) % n_buckets);
		guint32 icon = icons_off + 12 * i;

		put32(b, icon, get32(b, head));
		put32(b, head, icon);
	}
	return icons_off;
}

void iconcache_build(GPtrArray *dirs, GPtrArray *names, GPtrArray *svg_names,
		     GPtrArray *sized_svg, GHashTable *extra, GByteArray *b)
{
	g_autoptr(GHashTable) in_svg =
		g_hash_table_new(g_str_hash, g_str_equal);
	g_autoptr(GHashTable) in_png =
		g_hash_table_new(g_str_hash, g_str_equal);
	g_autoptr(GHashTable) in_sizes =
		g_hash_table_new(g_str_hash, g_str_equal);
	g_autoptr(GPtrArray) all = g_ptr_array_new();
	g_autoptr(GHashTable) lists = g_hash_table_new_full(
		g_bytes_hash, g_bytes_equal, (GDestroyNotify)g_bytes_unref, NULL);
	guint scalable = dirs->len - 1;
	guint32 hash_off, dirs_off, n_buckets, icons_off, list_png, list_both,
		list_svg, list_svg_all;

	for (guint i = 0; i < svg_names->len; i++)
		g_hash_table_add(in_svg, svg_names->pdata[i]);
	for (guint i = 0; sized_svg && i < sized_svg->len; i++)
		g_hash_table_add(in_sizes, sized_svg->pdata[i]);
	for (guint i = 0; i < names->len; i++) {
		g_hash_table_add(in_png, names->pdata[i]);
		g_ptr_array_add(all, names->pdata[i]);
	}
	for (guint i = 0; i < svg_names->len; i++)
		if (!g_hash_table_contains(in_png, svg_names->pdata[i]))
			g_ptr_array_add(all, svg_names->pdata[i]);
	if (extra) {
		GHashTableIter it;
		gpointer name;

		g_hash_table_iter_init(&it, extra);
		while (g_hash_table_iter_next(&it, &name, NULL))
			if (!g_hash_table_contains(in_png, name) &&
			    !g_hash_table_contains(in_svg, name))
				g_ptr_array_add(all, name);
	}

	g_byte_array_set_size(b, 0);
	append16(b, 1); /* major version */
	append16(b, 0); /* minor version */
	append32(b, 0); /* hash offset, written last */
	append32(b, 0); /* directory list offset, written last */

	n_buckets = all->len / 2 + 1;
	hash_off = append32(b, n_buckets);
	for (guint i = 0; i < n_buckets; i++)
		append32(b, NONE);

	list_png = append_images(b, 0, scalable, SUFFIX_PNG, scalable, false);
	list_both = append_images(b, 0, scalable, SUFFIX_PNG, scalable, true);
	list_svg = append_images(b, 0, 0, 0, scalable, true);
	list_svg_all = append_images(b, 0, scalable, SUFFIX_SVG, scalable, true);

	icons_off = append_chains(b, all, n_buckets, hash_off);
	for (guint i = 0; i < all->len; i++) {
		const char *name = all->pdata[i];
		guint32 icon = icons_off + 12 * i;
		bool png = g_hash_table_contains(in_png, name);
		bool svg = g_hash_table_contains(in_svg, name);
		GArray *in = png || !extra ? NULL : g_hash_table_lookup(extra, name);

		put32(b, icon + 4, append_str(b, name));
		put32(b, icon + 8,
		      in	 ? append_images_in(b, lists, in, scalable, svg)
		      : png && svg ? list_both
		      : png	   ? list_png
		      : g_hash_table_contains(in_sizes, name) ? list_svg_all
				   : list_svg);
	}
	dirs_off = append32(b, dirs->len);
	g_byte_array_set_size(b, b->len + 4 * dirs->len);
	for (guint i = 0; i < dirs->len; i++)
		put32(b, dirs_off + 4 + 4 * i, append_str(b, dirs->pdata[i]));

	put32(b, 4, hash_off);
	put32(b, 8, dirs_off);
}
