/* The rendered-blob table; see blob.h. */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "blob.h"
#include "db.h"
#include "log.h"
#include "time-util.h"

/* Who judged a failure: a newer iconfs may decode what this one cannot. */
#define BLOB_JUDGE ICONFS_VERSION
/* Sources hashed to stand in for their inode at most this big (the render
 * workers take no bigger ones either). */
#define BLOB_HASH_MAX (16LL * 1024 * 1024)

static uint32_t crc_add(uint32_t crc, const void *p, size_t n)
{
	return (uint32_t)crc32(crc, p, (uInt)n);
}

static uint32_t crc_add_i64(uint32_t crc, long long v)
{
	uint8_t b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)((unsigned long long)v >> (8 * i));
	return crc_add(crc, b, sizeof(b));
}

/* The checksum of a row's head: everything but `used` and the data, whose
 * own checksum is part of it. */
static uint32_t head_crc(const struct blob_key *k, int status,
			 const char *judged, long long bytes, uint32_t data_crc)
{
	uint32_t c = (uint32_t)crc32(0, Z_NULL, 0);

	c = crc_add(c, k->source, strlen(k->source) + 1);
	c = crc_add_i64(c, k->px);
	c = crc_add_i64(c, k->ino);
	c = crc_add_i64(c, k->size);
	c = crc_add_i64(c, k->mtime_ns);
	/* rows of schema 007 and before have no hash, and their checksum
	 * none either */
	if (k->hash)
		c = crc_add_i64(c, k->hash);
	c = crc_add_i64(c, status);
	c = crc_add(c, judged, strlen(judged) + 1);
	c = crc_add_i64(c, bytes);
	return crc_add_i64(c, data_crc);
}

long long blob_source_hash(const void *data, size_t len)
{
	g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);
	uint8_t digest[32];
	gsize n = sizeof(digest);
	unsigned long long h = 0;

	g_checksum_update(sum, data, (gssize)len);
	g_checksum_get_digest(sum, digest, &n);
	for (int i = 0; i < 8; i++)
		h = h << 8 | digest[i];
	return h ? (long long)h : 1;
}

/* The hash of the file open as `fd`, of `size` bytes; 0 when it cannot be
 * read whole. */
static long long fd_source_hash(int fd, long long size)
{
	_cleanup_free_ void *data = NULL;
	ssize_t n;

	if (fd < 0 || size < 0 || size > BLOB_HASH_MAX ||
	    !(data = malloc(size ? (size_t)size : 1)))
		return 0;
	n = pread(fd, data, (size_t)size, 0);
	return n == size ? blob_source_hash(data, (size_t)n) : 0;
}

static uint32_t data_crc(const void *data, size_t len)
{
	return crc_add((uint32_t)crc32(0, Z_NULL, 0), data, len);
}

static void bind_key(sqlite3_stmt *s, const char *source, unsigned px)
{
	sqlite3_bind_text(s, 1, source, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 2, (int)px);
}

enum {
	COL_INO,
	COL_SIZE,
	COL_MTIME,
	COL_STATUS,
	COL_JUDGED,
	COL_BYTES,
	COL_DATA_CRC,
	COL_HEAD_CRC,
	COL_USED,
	COL_LENGTH,
	COL_HASH,
	COL_DATA,
};

static int blob_bad(const struct blob_key *k, const char *why)
{
	log_warning("rendered '%s' at %u px fails its check (%s), rendering "
		    "again",
		    k->source, k->px, why);
	return -ENOENT;
}

#define BLOB_HEAD_COLUMNS                                                 \
	"SELECT src_ino, src_size, src_mtime_ns, status, judged, bytes, " \
	"data_crc, head_crc, used, length(data), src_hash"
#define BLOB_WHERE " FROM %s.blob WHERE source = ?1 AND px = ?2"

/* One table's prepared reads: the user's own, or the shared layer's. */
struct blob_layer {
	sqlite3 *db;
	sqlite3_stmt *head; /* the row without its data */
	sqlite3_stmt *full;
	bool shared;
	bool own_db;	 /* db is this layer's own connection (closed with it) */
	bool complained; /* about a layer that fails to read */
};

struct blob_reader {
	struct blob_layer own, below;
};

#define BLOB_LAYER_STATEMENTS(l, head_sql, full_sql)                          \
	{                                                                     \
		{ &(l)->head, head_sql }, { &(l)->full, full_sql },           \
	}

/* The reads of table `schema`.blob of `db`. */
static int layer_prepare(struct blob_layer *l, sqlite3 *db, const char *schema,
			 bool shared)
{
	g_autofree char *head = g_strdup_printf(BLOB_HEAD_COLUMNS BLOB_WHERE,
						schema);
	g_autofree char *full =
		g_strdup_printf(BLOB_HEAD_COLUMNS ", data" BLOB_WHERE, schema);
	const struct db_statement stmts[] =
		BLOB_LAYER_STATEMENTS(l, head, full);

	l->db = db;
	l->shared = shared;
	return db_prepare_all(db, stmts, ELEMENTSOF(stmts));
}

static void layer_finalize(struct blob_layer *l)
{
	const struct db_statement stmts[] =
		BLOB_LAYER_STATEMENTS(l, NULL, NULL);

	db_finalize_all(stmts, ELEMENTSOF(stmts));
	if (l->own_db)
		sqlite3_close_v2(l->db);
	*l = (struct blob_layer){ 0 };
}

/* The shared layer at `path` opened for reading, or why not: a file of
 * someone else who could write it, not an index of this iconfs, no blob
 * table. */
static int layer_open(const char *path, sqlite3 **ret, const char **ret_why)
{
	_cleanup_(sqlite3_closep) sqlite3 *db = NULL;
	struct blob_layer probe = { 0 };
	int r;

	r = db_file_trusted(path, ret_why);
	if (r < 0)
		return r;
	r = db_open_immutable(path, &db);
	if (r < 0) {
		*ret_why = r == -EPROTO ? "is from another iconfs version"
					: "is not an iconfs index";
		return r;
	}
	r = layer_prepare(&probe, db, "main", true);
	layer_finalize(&probe);
	if (r < 0) {
		*ret_why = "has no rendered icons";
		return r;
	}
	*ret = TAKE_PTR(db);
	return 0;
}

char *blob_key_text(const struct blob_key *k)
{
	return g_strdup_printf("%u:%s", k->px, k->source);
}

int blob_layer_check(const char *path)
{
	_cleanup_(sqlite3_closep) sqlite3 *db = NULL;
	const char *why = NULL;
	int r = layer_open(path, &db, &why);

	if (r < 0)
		log_warning("shared layer '%s' %s: ignored", path, why);
	return r;
}

/* Whether `db` has the layer at `shared` attached as `machine` (the index
 * is layered over it, indexer/layered.h): then its renders are read there,
 * with no connection of their own. */
static bool layer_attached(sqlite3 *db, const char *shared)
{
	const char *machine = sqlite3_db_filename(db, "machine");
	struct stat a, b;

	return machine && *machine && stat(machine, &a) == 0 &&
	       stat(shared, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

int blob_reader_new(sqlite3 *db, const char *shared, struct blob_reader **ret)
{
	struct blob_reader *b = calloc(1, sizeof(*b));
	sqlite3 *below = NULL;
	const char *why;
	int r;

	if (!b)
		return -ENOMEM;
	r = layer_prepare(&b->own, db, "main", false);
	/* checked at start: a layer replaced since that fails is left out */
	if (r >= 0 && shared && layer_attached(db, shared)) {
		if (layer_prepare(&b->below, db, "machine", true) < 0)
			layer_finalize(&b->below);
	} else if (r >= 0 && shared && layer_open(shared, &below, &why) >= 0) {
		b->below.own_db = true;
		if (layer_prepare(&b->below, below, "main", true) < 0)
			layer_finalize(&b->below);
	}
	if (r < 0) {
		blob_reader_free(b);
		return r;
	}
	*ret = b;
	return 0;
}

struct blob_reader *blob_reader_free(struct blob_reader *b)
{
	if (b) {
		layer_finalize(&b->own);
		layer_finalize(&b->below);
		free(b);
	}
	return NULL;
}

/* Whether row `s` is of the source's stamp in `k`: the same inode, size
 * and mtime; in the shared layer also the same size and mtime with
 * another inode, where the source's bytes (`fd`) hash as the row says.
 * *ret_row_key gets the key the row's checksum was taken over. */
static bool row_fresh(const struct blob_layer *l, sqlite3_stmt *s,
		      const struct blob_key *k, int fd,
		      struct blob_key *ret_row_key)
{
	long long hash = sqlite3_column_int64(s, COL_HASH);

	*ret_row_key = *k;
	ret_row_key->hash = hash;
	if (sqlite3_column_int64(s, COL_SIZE) != k->size ||
	    sqlite3_column_int64(s, COL_MTIME) != k->mtime_ns)
		return false;
	if (sqlite3_column_int64(s, COL_INO) == k->ino)
		return true;
	/* the same files copied elsewhere: rsync -a and cp -a keep size
	 * and mtime, not the inode */
	if (!l->shared || hash == 0 || fd_source_hash(fd, k->size) != hash)
		return false;
	ret_row_key->ino = sqlite3_column_int64(s, COL_INO);
	return true;
}

static int layer_get(struct blob_layer *l, const struct blob_key *k, int fd,
		     void **ret_data, size_t *ret_len, long long *ret_used)
{
	struct blob_key row;
	/* length() of a blob comes from the record header: the data itself
	 * is read only when asked for. The reset at return ends the read
	 * transaction. */
	_cleanup_(sqlite3_resetp) sqlite3_stmt *s =
		ret_data ? l->full : l->head;
	long long bytes;
	const char *judged;
	uint32_t dcrc;
	int status, rc;

	bind_key(s, k->source, k->px);
	rc = sqlite3_step(s);
	if (rc == SQLITE_DONE)
		return -ENOENT;
	if (rc != SQLITE_ROW && l->shared) {
		/* a damaged layer is a miss, said once per reader */
		if (!l->complained)
			log_warning("shared layer: %s: reading it as missing",
				    sqlite3_errmsg(l->db));
		l->complained = true;
		return -ENOENT;
	}
	if (rc != SQLITE_ROW)
		return db_log_error(l->db, rc, "cannot read rendered icon");
	if (!row_fresh(l, s, k, fd, &row))
		return -ENOENT; /* stale: the source changed */

	status = sqlite3_column_int(s, COL_STATUS);
	judged = db_column_str(s, COL_JUDGED);
	bytes = sqlite3_column_int64(s, COL_BYTES);
	dcrc = (uint32_t)sqlite3_column_int64(s, COL_DATA_CRC);
	if ((uint32_t)sqlite3_column_int64(s, COL_HEAD_CRC) !=
	    head_crc(&row, status, judged, bytes, dcrc))
		return blob_bad(k, "head checksum");
	if (status != 0)
		return streq(judged, BLOB_JUDGE) ? -EIO : -ENOENT;
	if (bytes <= 0 || sqlite3_column_int64(s, COL_LENGTH) != bytes)
		return blob_bad(k, "length");
	if (ret_data) {
		const void *d = sqlite3_column_blob(s, COL_DATA);
		size_t n = (size_t)sqlite3_column_bytes(s, COL_DATA);
		void *copy;

		if (!d || n != (size_t)bytes || data_crc(d, n) != dcrc)
			return blob_bad(k, "data checksum");
		copy = malloc(n);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, d, n);
		*ret_data = copy;
	}
	*ret_len = (size_t)bytes;
	if (ret_used)
		*ret_used = sqlite3_column_int64(s, COL_USED);
	return 0;
}

int blob_get(struct blob_reader *b, const struct blob_key *k, int fd,
	     void **ret_data, size_t *ret_len, long long *ret_used)
{
	int r = layer_get(&b->own, k, fd, ret_data, ret_len, ret_used);

	if (r != -ENOENT || !b->below.db)
		return r;
	r = layer_get(&b->below, k, fd, ret_data, ret_len, NULL);
	return r == 0 ? BLOB_FROM_SHARED : r;
}

/* Bytes of the row (source, px) before it is replaced or deleted. */
static long long blob_bytes_of(sqlite3 *db, const char *source, unsigned px)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *s = NULL;

	if (db_prepare(db,
		       "SELECT bytes FROM blob WHERE source = ?1 AND px = ?2",
		       &s) < 0)
		return 0;
	bind_key(s, source, px);
	return sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
}

int blob_put(sqlite3 *db, const struct blob_key *k, int status,
	     const void *data, size_t len, long long *ret_delta)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *s = NULL;
	const char *judged = status == 0 ? "" : BLOB_JUDGE;
	long long bytes = status == 0 ? (long long)len : 0;
	uint32_t dcrc = status == 0 ? data_crc(data, len) : 0;
	long long old = blob_bytes_of(db, k->source, k->px);
	int rc, r;

	r = db_prepare(db,
		       "INSERT OR REPLACE INTO blob(source, px, src_ino, "
		       "src_size, src_mtime_ns, status, judged, bytes, "
		       "data_crc, head_crc, used, data, src_hash) VALUES (?1, "
		       "?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, unixepoch(), ?11, "
		       "?12)",
		       &s);
	if (r < 0)
		return r;
	bind_key(s, k->source, k->px);
	sqlite3_bind_int64(s, 3, k->ino);
	sqlite3_bind_int64(s, 4, k->size);
	sqlite3_bind_int64(s, 5, k->mtime_ns);
	sqlite3_bind_int(s, 6, status);
	sqlite3_bind_text(s, 7, judged, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 8, bytes);
	sqlite3_bind_int64(s, 9, dcrc);
	sqlite3_bind_int64(s, 10, head_crc(k, status, judged, bytes, dcrc));
	if (status == 0)
		sqlite3_bind_blob(s, 11, data, (int)len, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 11);
	sqlite3_bind_int64(s, 12, k->hash);
	rc = sqlite3_step(s);
	if (rc != SQLITE_DONE)
		return db_errno(rc);
	if (ret_delta)
		*ret_delta = bytes - old;
	return 0;
}

int blob_touch(sqlite3 *db, const char *source, unsigned px, long long when)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *s = NULL;
	int r = db_prepare(db,
			   "UPDATE blob SET used = ?3 "
			   "WHERE source = ?1 AND px = ?2",
			   &s);

	if (r < 0)
		return r;
	bind_key(s, source, px);
	sqlite3_bind_int64(s, 3, when);
	return db_errno(sqlite3_step(s));
}

long long blob_total(sqlite3 *db)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *s = NULL;

	if (db_prepare(db, "SELECT total(bytes) FROM blob INDEXED BY blob_used",
		       &s) < 0 ||
	    sqlite3_step(s) != SQLITE_ROW)
		return 0;
	return (long long)sqlite3_column_double(s, 0);
}

long long blob_evict(sqlite3 *db, long long want, unsigned max_rows)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *del = NULL;
	long long freed = 0;
	int r;

	r = db_prepare(db, "SELECT id, bytes FROM blob ORDER BY used LIMIT ?1",
		       &q);
	if (r >= 0)
		r = db_prepare(db, "DELETE FROM blob WHERE id = ?1", &del);
	if (r < 0)
		return r;
	sqlite3_bind_int(q, 1, (int)max_rows);
	while (freed < want && sqlite3_step(q) == SQLITE_ROW) {
		sqlite3_bind_int64(del, 1, sqlite3_column_int64(q, 0));
		r = db_errno(sqlite3_step(del));
		sqlite3_reset(del);
		if (r < 0)
			return r;
		freed += sqlite3_column_int64(q, 1);
	}
	return freed;
}

long long blob_drop_source(sqlite3 *db, const char *source)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *s = NULL;
	long long freed = 0;
	int rc, r;

	r = db_query(db, &s,
		     "DELETE FROM blob WHERE source = ?1 RETURNING bytes", "t",
		     source);
	if (r < 0)
		return r;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		freed += sqlite3_column_int64(s, 0);
	return rc == SQLITE_DONE ? freed : db_errno(rc);
}

int blob_foreach_source(sqlite3 *db,
			void (*fn)(const struct blob_key *k, void *userdata),
			void *userdata)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	int rc, r;

	r = db_prepare(db,
		       "SELECT source, src_ino, src_size, src_mtime_ns, "
		       "src_hash FROM blob GROUP BY source",
		       &q);
	if (r < 0)
		return r;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		struct blob_key k = {
			.source = db_column_str(q, 0),
			.ino = sqlite3_column_int64(q, 1),
			.size = sqlite3_column_int64(q, 2),
			.mtime_ns = sqlite3_column_int64(q, 3),
			.hash = sqlite3_column_int64(q, 4),
		};
		fn(&k, userdata);
	}
	return db_errno(rc);
}

int blob_stats(sqlite3 *db, struct blob_stats *ret)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *s = NULL;
	int rc, r;

	r = db_prepare(db,
		       "SELECT count(*) FILTER (WHERE status = 0), "
		       "total(bytes), count(*) FILTER (WHERE status != 0) "
		       "FROM blob",
		       &s);
	if (r < 0)
		return r;
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW)
		return db_errno(rc);
	*ret = (struct blob_stats){
		.rendered = sqlite3_column_int64(s, 0),
		.bytes = (long long)sqlite3_column_double(s, 1),
		.failed = sqlite3_column_int64(s, 2),
	};
	return 0;
}

/* Renders in the layer whose source changed or went. */
struct stale {
	GPtrArray *sources;
};

static void note_stale(const struct blob_key *k, void *userdata)
{
	struct stale *s = userdata;
	_cleanup_close_ int fd = open(k->source, O_RDONLY | O_CLOEXEC);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0 || (long long)st.st_size != k->size ||
	    timespec_ns(st.st_mtim) != k->mtime_ns ||
	    ((long long)st.st_ino != k->ino &&
	     (k->hash == 0 || fd_source_hash(fd, k->size) != k->hash)))
		g_ptr_array_add(s->sources, g_strdup(k->source));
}

int blob_layer_drop_stale(const char *path)
{
	_cleanup_(sqlite3_closep) sqlite3 *db = NULL;
	struct stale s = { g_ptr_array_new_with_free_func(g_free) };
	int r;

	r = db_open(path, 0, &db);
	if (r >= 0)
		r = blob_foreach_source(db, note_stale, &s);
	if (r >= 0 && s.sources->len > 0) {
		r = db_exec(db, "BEGIN IMMEDIATE");
		for (guint i = 0; r >= 0 && i < s.sources->len; i++) {
			long long freed =
				blob_drop_source(db, s.sources->pdata[i]);
			r = freed < 0 ? (int)freed : 0;
		}
		r = r >= 0 ? db_exec(db, "COMMIT") : db_exec(db, "ROLLBACK");
	}
	g_ptr_array_unref(s.sources);
	return r;
}

int blob_layer_seal(const char *path)
{
	_cleanup_(sqlite3_closep) sqlite3 *db = NULL;
	_cleanup_close_ int fd = -1;
	int r;

	r = db_open(path, 0, &db);
	if (r >= 0)
		r = db_exec(db, "PRAGMA journal_mode = DELETE");
	if (r < 0)
		return r;
	sqlite3_close_v2(TAKE_PTR(db));
	db_unlink(path, false);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fchmod(fd, 0644) < 0 || fsync(fd) < 0)
		return -errno;
	return 0;
}

int blob_drop_below(sqlite3 *db, const char *layer)
{
	int r = db_attach_immutable(db, layer, "below");

	if (r < 0)
		return r;
	r = db_exec(db, "DELETE FROM main.blob WHERE status = 0 AND EXISTS "
			"(SELECT 1 FROM below.blob l WHERE l.source = blob.source "
			"AND l.px = blob.px AND l.status = 0 "
			"AND l.src_ino = blob.src_ino "
			"AND l.src_size = blob.src_size "
			"AND l.src_mtime_ns = blob.src_mtime_ns)");
	if (r >= 0)
		r = sqlite3_changes(db);
	(void)db_exec(db, "DETACH below");
	return r;
}
