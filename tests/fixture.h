/* Fixture contexts for unit tests: a temporary directory with a base
 * directory of small themes written for one rule each, and an index of it
 * (a real SQLite file). Header only, for the test programs of the indexer
 * layer and those above (it includes only indexer/ and db/ headers). */
#pragma once

#include <glib.h>
#include <glib/gstdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include "db.h"
#include "index.h"
#include "lookup.h"

struct fixture {
	char *dir;     /* the temporary directory */
	char *base;    /* dir/icons: the one base directory */
	char *db_path; /* dir/index.sqlite */
	char *bases[2];
	sqlite3 *db;
	struct lookup *l;
	enum lookup_rules rules; /* of f->l: GTK's unless set before indexing */
};

static inline struct fixture *fixture_new(void)
{
	struct fixture *f = g_new0(struct fixture, 1);

	f->dir = g_dir_make_tmp("iconfs-test-XXXXXX", NULL);
	f->base = g_build_filename(f->dir, "icons", NULL);
	f->db_path = g_build_filename(f->dir, "index.sqlite", NULL);
	f->bases[0] = f->base;
	g_mkdir_with_parents(f->base, 0755);
	return f;
}

/* Write `len` bytes (-1: a string) at base/relpath, creating directories. */
static inline void fixture_write(struct fixture *f, const char *relpath,
				 const void *data, gssize len)
{
	g_autofree char *path = g_build_filename(f->base, relpath, NULL);
	g_autofree char *dir = g_path_get_dirname(path);

	g_mkdir_with_parents(dir, 0755);
	g_file_set_contents(path, data, len, NULL);
}

/* Append a PNG chunk: length, type, data, CRC of type and data. */
static inline void fixture_png_chunk(GByteArray *out, const char *type,
				     const uint8_t *data, uint32_t len)
{
	uint8_t be[4] = { len >> 24, len >> 16, len >> 8, len };
	uLong crc = crc32(0, (const Bytef *)type, 4); /* data: never NULL */

	crc = crc32(crc, data, len);
	g_byte_array_append(out, be, 4);
	g_byte_array_append(out, (const guint8 *)type, 4);
	g_byte_array_append(out, data, len);
	be[0] = crc >> 24, be[1] = crc >> 16, be[2] = crc >> 8, be[3] = crc;
	g_byte_array_append(out, be, 4);
}

/* An opaque w×w PNG (RGBA 8 bits, every byte 0x80), made with zlib alone:
 * the fixture stays below content/'s encoder. */
static inline void fixture_png(struct fixture *f, const char *relpath,
			       unsigned w)
{
	static const uint8_t sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a,
					'\n' };
	const uint8_t ihdr[13] = { w >> 24, w >> 16, w >> 8, w, w >> 24,
				   w >> 16, w >> 8, w, 8, 6, 0, 0, 0 };
	size_t row = (size_t)w * 4 + 1, raw_len = row * w;
	uint8_t *raw = malloc(raw_len);
	uLongf z_len = compressBound(raw_len);
	uint8_t *z = malloc(z_len);
	GByteArray *png = g_byte_array_new();

	memset(raw, 0x80, raw_len);
	for (unsigned y = 0; y < w; y++)
		raw[y * row] = 0; /* filter: none */
	g_byte_array_append(png, sig, 8);
	fixture_png_chunk(png, "IHDR", ihdr, 13);
	if (compress(z, &z_len, raw, raw_len) == Z_OK)
		fixture_png_chunk(png, "IDAT", z, (uint32_t)z_len);
	fixture_png_chunk(png, "IEND", (const uint8_t *)"", 0);
	fixture_write(f, relpath, png->data, png->len);
	g_byte_array_unref(png);
	free(z);
	free(raw);
}

static inline const char *fixture_svg(void)
{
	return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"16\" "
	       "height=\"16\"><rect width=\"16\" height=\"16\" "
	       "fill=\"red\"/></svg>";
}

/* Index (or refresh) the base directory; opens f->db and f->l. */
static inline int fixture_index(struct fixture *f)
{
	if (f->l)
		lookup_free(f->l);
	if (f->db)
		sqlite3_close(f->db);
	f->l = NULL;
	f->db = NULL;
	if (index_open(f->db_path, NULL, f->bases, 0, NULL, &f->db, NULL) < 0)
		return -1;
	return lookup_new(f->db, f->rules, &f->l);
}

/* Make f's index look as schema version `version` left it (what later
 * migrations added, taken out), and close it. */
static inline int fixture_downgrade(struct fixture *f, int version)
{
	g_autofree char *sql = g_strdup_printf(
		"%s%s%s%sPRAGMA user_version = %d",
		version < 10 ? "ALTER TABLE warm DROP COLUMN theme;" : "",
		version < 9 ? "ALTER TABLE listing DROP COLUMN below;" : "",
		version < 8 ? "ALTER TABLE blob DROP COLUMN src_hash;" : "",
		version < 7 ? "ALTER TABLE theme DROP COLUMN kde_keys;"
			      "ALTER TABLE subdir DROP COLUMN context;"
			    : "",
		version);
	int r = db_exec(f->db, sql);

	lookup_free(f->l);
	sqlite3_close(f->db);
	f->l = NULL;
	f->db = NULL;
	return r;
}

static inline void fixture_free(struct fixture *f)
{
	char *argv[] = { "rm", "-rf", f->dir, NULL };

	lookup_free(f->l);
	if (f->db)
		sqlite3_close(f->db);
	g_spawn_sync(NULL, argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL,
		     NULL, NULL, NULL);
	g_free(f->dir);
	g_free(f->base);
	g_free(f->db_path);
	g_free(f);
}

/* A theme "t" with Fixed 16, Threshold 32 and a Scalable directory,
 * inheriting "parent" (which has 48); hicolor with one icon; an unthemed
 * icon in the base directory itself. */
static inline void fixture_themes(struct fixture *f)
{
	fixture_write(
		f, "t/index.theme",
		"[Icon Theme]\nName=Tee\nComment=A theme\nInherits=parent\n"
		"Directories=16,32,scalable\n\n[16]\nSize=16\nType=Fixed\n\n"
		"[32]\nSize=32\nType=Threshold\n\n[scalable]\nSize=48\n"
		"Type=Scalable\nMinSize=8\nMaxSize=512\n",
		-1);
	fixture_png(f, "t/16/a.png", 16);
	fixture_png(f, "t/32/a.png", 32);
	fixture_write(f, "t/scalable/a.svg", fixture_svg(), -1);
	fixture_write(f, "t/scalable/b-symbolic.svg", fixture_svg(), -1);
	fixture_write(f, "parent/index.theme",
		      "[Icon Theme]\nName=Parent\nDirectories=48\n\n[48]\n"
		      "Size=48\nType=Fixed\n",
		      -1);
	fixture_png(f, "parent/48/c.png", 48);
	fixture_write(f, "hicolor/index.theme",
		      "[Icon Theme]\nName=Hicolor\nDirectories=64\n\n[64]\n"
		      "Size=64\nType=Fixed\n",
		      -1);
	fixture_png(f, "hicolor/64/h.png", 64);
	fixture_png(f, "loose.png", 24);
}
