/* GTK's icon-theme.cache as iconcache_build() writes it, read back the way
 * GTK's gtkiconcache.c reads it: the header, the hash chains by GTK's hash,
 * each icon's image list (directory index and suffix flags) and the
 * directory list; and, as Qt's QIconCacheGtkReader does, every 32-bit value
 * at a 4-byte offset and every 16-bit one at an even one (Qt takes the
 * cache for a broken one otherwise). */
#include <glib.h>

#include "iconcache.h"
#include "test.h"

#define FLAG_SVG 2
#define FLAG_PNG 4

static guint32 get32(const GByteArray *b, guint32 off)
{
	const guint8 *p = b->data + off;

	g_assert_cmpuint(off % 4, ==, 0);
	g_assert_cmpuint(off + 4, <=, b->len);
	return (guint32)p[0] << 24 | (guint32)p[1] << 16 | (guint32)p[2] << 8 |
	       p[3];
}

static guint16 get16(const GByteArray *b, guint32 off)
{
	g_assert_cmpuint(off % 2, ==, 0);
	return (guint16)(b->data[off] << 8 | b->data[off + 1]);
}

/* The image list of `name`, as "dir:flags,..." over the directory names,
 * or NULL when the cache does not hold it; looked for in the chain of
 * bucket `h` % n_buckets, with `h` GTK's icon_name_hash of the name
 * (computed apart, in Python: h = h * 31 + c). */
static char *cache_images(const GByteArray *b, const char *name, guint32 h)
{
	guint32 hash = get32(b, 4), dirs = get32(b, 8);
	guint32 n_buckets = get32(b, hash);
	guint32 icon = get32(b, hash + 4 + 4 * (h % n_buckets));

	while (icon != 0xffffffffu) {
		if (g_str_equal((const char *)b->data + get32(b, icon + 4),
				name)) {
			guint32 list = get32(b, icon + 8);
			GString *out = g_string_new(NULL);

			for (guint32 i = 0; i < get32(b, list); i++) {
				guint32 img = list + 4 + 8 * i;
				guint16 dir = get16(b, img);

				g_string_append_printf(
					out, "%s%s:%u", i ? "," : "",
					(const char *)b->data +
						get32(b, dirs + 4 + 4 * dir),
					get16(b, img + 2));
			}
			return g_string_free(out, FALSE);
		}
		icon = get32(b, icon);
	}
	return NULL;
}

TEST(read_back)
{
	g_autoptr(GPtrArray) dirs = g_ptr_array_new();
	g_autoptr(GPtrArray) names = g_ptr_array_new();
	g_autoptr(GPtrArray) svgs = g_ptr_array_new();
	g_autoptr(GByteArray) b = g_byte_array_new();
	g_autoptr(GHashTable) only_in = g_hash_table_new_full(
		g_str_hash, g_str_equal, NULL, (GDestroyNotify)g_array_unref);
	GArray *in16 = g_array_new(FALSE, FALSE, sizeof(guint));
	GArray *in48 = g_array_new(FALSE, FALSE, sizeof(guint));
	g_autofree char *a = NULL, *sym = NULL, *none = NULL, *z = NULL,
			*pre = NULL, *odd = NULL;

	g_ptr_array_add(dirs, "16x16");
	g_ptr_array_add(dirs, "48x48@2");
	g_ptr_array_add(dirs, "scalable");
	g_ptr_array_add(names, "edit-copy");
	g_ptr_array_add(names, "folder");
	g_ptr_array_add(names, "zz-last");
	g_ptr_array_add(svgs, "edit-copy");
	g_ptr_array_add(svgs, "go-next-symbolic");
	/* GTK's pre-encoded go-next-symbolic.symbolic.png in 16x16 alone */
	g_hash_table_insert(only_in, "go-next-symbolic.symbolic", in16);
	g_array_append_val(in16, (guint){ 0 });
	/* a name of odd length, only in 48x48@2: the values after it stay
	 * aligned */
	g_hash_table_insert(only_in, "ab", in48);
	g_array_append_val(in48, (guint){ 1 });
	iconcache_build(dirs, names, svgs, NULL, only_in, b);

	ASSERT_EQ_INT(get16(b, 0), 1); /* major */
	ASSERT_EQ_INT(get16(b, 2), 0); /* minor */
	ASSERT_EQ_INT(get32(b, get32(b, 8)), 3); /* directories */
	a = cache_images(b, "edit-copy", 2382272856u);
	ASSERT_EQ_STR(a, "16x16:4,48x48@2:4,scalable:2");
	z = cache_images(b, "zz-last", 0x08942d03u);
	ASSERT_EQ_STR(z, "16x16:4,48x48@2:4");
	/* a symbolic name only as SVG in scalable/ */
	sym = cache_images(b, "go-next-symbolic", 0xe847de27u);
	ASSERT_EQ_STR(sym, "scalable:2");
	pre = cache_images(b, "go-next-symbolic.symbolic", 0x6dc08c99u);
	ASSERT_EQ_STR(pre, "16x16:4");
	odd = cache_images(b, "ab", 97u * 31 + 98);
	ASSERT_EQ_STR(odd, "48x48@2:4");
	none = cache_images(b, "not-there", 0x0bba8aeau);
	ASSERT_TRUE(none == NULL);
}

TEST(empty_theme)
{
	g_autoptr(GPtrArray) dirs = g_ptr_array_new();
	g_autoptr(GPtrArray) names = g_ptr_array_new();
	g_autoptr(GPtrArray) svgs = g_ptr_array_new();
	g_autoptr(GByteArray) b = g_byte_array_new();
	g_autofree char *x = NULL;

	g_ptr_array_add(dirs, "scalable");
	iconcache_build(dirs, names, svgs, NULL, NULL, b);
	ASSERT_EQ_INT(get16(b, 0), 1);
	x = cache_images(b, "anything", 0xec4d5e82u);
	ASSERT_TRUE(x == NULL);
}

TEST_MAIN(TEST_CASE(read_back), TEST_CASE(empty_theme))
