/* Directory rows and their listings: stamps, reading a directory's icon
 * files, attaching listings shared between paths of one directory, and
 * what stays inside the base directories. Part of the scan module; see
 * scanner.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db.h"
#include "rows.h"
#include "log.h"
#include "scanner.h"
#include "time-util.h"

void changed_theme(struct scanner *s)
{
	s->stats.changed = true;
	if (s->changes)
		s->changes->themes = true;
}

void scan_watch(struct scanner *s, const char *dir, bool base)
{
	if (s->watcher)
		s->watcher->watch(dir, base, s->watcher->userdata);
}

static void changed_name(struct scanner *s, const char *name)
{
	if (s->changes && !g_hash_table_contains(s->changes->names, name))
		g_hash_table_add(s->changes->names, g_strdup(name));
}

/* The names in listing `id` (none for -1), as a new set (or NULL when
 * nobody asks). */
static GHashTable *listing_names(struct scanner *s, long long id)
{
	GHashTable *set;

	if (!s->changes)
		return NULL;
	set = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	if (id < 0)
		return set;
	sqlite3_bind_int64(s->listing_names, 1, id);
	while (sqlite3_step(s->listing_names) == SQLITE_ROW)
		g_hash_table_add(set,
				 g_strdup(db_column_str(s->listing_names, 0)));
	(void)sqlite3_reset(s->listing_names);
	return set;
}

static void changed_names_of(struct scanner *s, long long listing_id)
{
	g_autoptr(GHashTable) set = listing_names(s, listing_id);
	GHashTableIter it;
	const char *name;

	if (!set)
		return;
	g_hash_table_iter_init(&it, set);
	while (g_hash_table_iter_next(&it, (void **)&name, NULL))
		changed_name(s, name);
}

static struct stamp stamp_of(const struct stat *st)
{
	return (struct stamp){ (long long)st->st_ino, timespec_ns(st->st_mtim),
			       timespec_ns(st->st_ctim) };
}

int stamp_eq(struct stamp a, struct stamp b)
{
	return a.ino == b.ino && a.mtime_ns == b.mtime_ns &&
	       a.ctime_ns == b.ctime_ns;
}

/* stat() a directory; a missing or non-directory path gives STAMP_MISSING. */
struct stamp stamp_dir(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
		return STAMP_MISSING;
	return stamp_of(&st);
}

int step_done(struct scanner *s, sqlite3_stmt *stmt)
{
	int rc = sqlite3_step(stmt);
	(void)sqlite3_reset(stmt);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return db_log_error(s->db, rc, "cannot update index");
	return 0;
}

int exec_bind(struct scanner *s, const char *sql, long long a, long long b)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *stmt = NULL;
	int r = db_prepare(s->db, sql, &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, a);
	sqlite3_bind_int64(stmt, 2, b);
	return step_done(s, stmt);
}

struct known_dir {
	long long id;
	struct stamp stamp;
};

int dirs_load(struct scanner *s)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;
	int rc;

	s->dirs_known = g_hash_table_new_full(g_str_hash, g_str_equal, NULL,
					      g_free);
	s->dirs_paths = g_string_chunk_new(64 * 1024);
	if (db_prepare(s->db,
		       "SELECT path, id, ino, mtime_ns, ctime_ns FROM dir",
		       &q) < 0)
		return -EIO;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		struct known_dir *k = g_new(struct known_dir, 1);

		*k = (struct known_dir){
			.id = sqlite3_column_int64(q, 1),
			.stamp = { sqlite3_column_int64(q, 2),
				   sqlite3_column_int64(q, 3),
				   sqlite3_column_int64(q, 4) },
		};
		g_hash_table_insert(s->dirs_known,
				    g_string_chunk_insert(s->dirs_paths,
							  db_column_str(q, 0)),
				    k);
	}
	return rc == SQLITE_DONE ? 0 : db_log_error(s->db, rc, "cannot read dirs");
}

void dirs_forget(struct scanner *s)
{
	if (s->dirs_known)
		g_hash_table_remove_all(s->dirs_known);
}

/* Find or create the dir row for `path`. Returns its id; *ret_stamp gets
 * the stored stamp (STAMP_MISSING for a new row). */
long long dir_row(struct scanner *s, const char *path, long long basedir_id,
		  long long theme_id, enum dir_kind kind, const char *relpath,
		  struct stamp *ret_stamp)
{
	struct known_dir *k =
		s->dirs_known ? g_hash_table_lookup(s->dirs_known, path) : NULL;
	long long id = -1;
	int rc;

	if (k) {
		id = k->id;
		*ret_stamp = k->stamp;
		g_hash_table_remove(s->dirs_known, path);
		return id;
	}
	sqlite3_bind_text(s->dir_get, 1, path, -1, SQLITE_STATIC);
	rc = sqlite3_step(s->dir_get);
	if (rc == SQLITE_ROW) {
		id = sqlite3_column_int64(s->dir_get, 0);
		ret_stamp->ino = sqlite3_column_int64(s->dir_get, 1);
		ret_stamp->mtime_ns = sqlite3_column_int64(s->dir_get, 2);
		ret_stamp->ctime_ns = sqlite3_column_int64(s->dir_get, 3);
	}
	(void)sqlite3_reset(s->dir_get);
	if (id >= 0)
		return id;

	sqlite3_bind_int64(s->dir_insert, 1, basedir_id);
	if (theme_id >= 0)
		sqlite3_bind_int64(s->dir_insert, 2, theme_id);
	else
		sqlite3_bind_null(s->dir_insert, 2);
	sqlite3_bind_int(s->dir_insert, 3, kind);
	sqlite3_bind_text(s->dir_insert, 4, relpath, -1, SQLITE_STATIC);
	sqlite3_bind_text(s->dir_insert, 5, path, -1, SQLITE_STATIC);
	if (step_done(s, s->dir_insert) < 0)
		return -1;
	*ret_stamp = STAMP_MISSING;
	if (kind == DIR_KIND_ROOT)
		changed_theme(s);
	s->stats.changed = true;
	return sqlite3_last_insert_rowid(s->db);
}

static int dir_set_stamp(struct scanner *s, long long id, struct stamp st)
{
	sqlite3_bind_int64(s->dir_set_stamp, 1, st.ino);
	sqlite3_bind_int64(s->dir_set_stamp, 2, st.mtime_ns);
	sqlite3_bind_int64(s->dir_set_stamp, 3, st.ctime_ns);
	sqlite3_bind_int64(s->dir_set_stamp, 4, id);
	return step_done(s, s->dir_set_stamp);
}

/* A symlinked icon is served only when its target stays inside one of the
 * base directories. */
static int target_allowed(struct scanner *s, const char *path)
{
	_cleanup_free_ char *real = basedirs_real_inside(s->real, path, false);

	return real != NULL;
}

/* Whether the symbolic link `entry` of directory `d` (at `path`) leads to
 * a regular file (else -ENOENT) inside the base directories (else 0: 1). A theme's links (Papirus: tens of
 * thousands) name a regular file by a relative path, in their own
 * directory or a neighbour ("../apps/x.svg"): such a file is inside
 * exactly when its directory is, which is resolved once per directory
 * named (`dirs`: the link's directory part → inside or not); any other
 * link is resolved whole. */
static int link_allowed(struct scanner *s, DIR *d, const char *path,
			const char *entry, GHashTable *dirs)
{
	g_autofree char *full = g_build_filename(path, entry, NULL);
	char target[PATH_MAX];
	struct stat st;
	ssize_t n;

	n = readlinkat(dirfd(d), entry, target, sizeof(target) - 1);
	if (n > 0 && target[0] != '/') {
		g_autofree char *dir = NULL;
		gpointer inside;

		target[n] = '\0';
		/* the file itself must not be a link again */
		if (fstatat(dirfd(d), target, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			goto whole;
		dir = g_path_get_dirname(target);
		if (!g_hash_table_lookup_extended(dirs, dir, NULL, &inside)) {
			g_autofree char *where =
				g_build_filename(path, dir, NULL);
			_cleanup_free_ char *real =
				basedirs_real_inside(s->real, where, true);

			inside = GINT_TO_POINTER(real != NULL);
			g_hash_table_insert(dirs, g_steal_pointer(&dir), inside);
		}
		return GPOINTER_TO_INT(inside);
	}
whole:
	if (fstatat(dirfd(d), entry, &st, 0) < 0 || !S_ISREG(st.st_mode))
		return -ENOENT;
	return target_allowed(s, full);
}

/* Split "name.ext" into the name length and the extension index. */
static int icon_file_name(const char *file, size_t *ret_len)
{
	const char *dot = strrchr(file, '.');
	int ext;

	if (!dot || dot == file)
		return -1;
	ext = icon_ext_from_name(dot + 1);
	if (ext < 0)
		return -1;
	*ret_len = dot - file;
	return ext;
}

/* Whether the entry `de` of directory `d` (at `path`) is served: a regular
 * file, or a link allowed (link_allowed(), `link_dirs` its cache); a link
 * that leads outside the base directories is a problem, logged. */
static bool entry_served(struct scanner *s, DIR *d, const char *path,
			 const struct dirent *de, GHashTable *link_dirs)
{
	unsigned char type = de->d_type;
	g_autofree char *full = NULL;
	int ok;

	if (type == DT_UNKNOWN) { /* a filesystem without d_type */
		struct stat st;

		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return false;
		type = S_ISLNK(st.st_mode)  ? DT_LNK
		       : S_ISREG(st.st_mode) ? DT_REG
					     : DT_UNKNOWN;
	}
	if (type == DT_REG)
		return true;
	if (type != DT_LNK)
		return false;
	ok = link_allowed(s, d, path, de->d_name, link_dirs);
	if (ok > 0)
		return true;
	if (ok < 0)
		return false;
	full = g_build_filename(path, de->d_name, NULL);
	s->stats.problems++;
	log_warning("'%s' points outside the icon directories, skipped", full);
	return false;
}

/* Replace the icons of listing `id` (its names were `old`, NULL when
 * nobody asks) with the icon files in `path`. */
static int listing_read(struct scanner *s, long long id, const char *path,
			GHashTable *old)
{
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	g_autoptr(GHashTable) link_dirs =
		g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	int r;

	sqlite3_bind_int64(s->icon_clear, 1, id);
	r = step_done(s, s->icon_clear);
	if (r < 0)
		return r;
	s->stats.changed = true;
	s->stats.dirs_read++;

	d = opendir(path);
	if (!d) {
		if (errno != ENOENT && errno != ENOTDIR) {
			s->stats.problems++;
			log_warning_errno(-errno, "cannot read '%s': %m", path);
		}
		return 0;
	}
	while ((errno = 0, de = readdir(d))) {
		char name[NAME_MAX + 1];
		size_t len;
		int ext = icon_file_name(de->d_name, &len);

		if (ext < 0 || !entry_served(s, d, path, de, link_dirs))
			continue;
		memcpy(name, de->d_name, len);
		name[len] = '\0';
		if (old && !g_hash_table_remove(old, name))
			changed_name(s, name);
		sqlite3_bind_text(s->icon_insert, 1, name, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s->icon_insert, 2, id);
		sqlite3_bind_int(s->icon_insert, 3, ext);
		r = step_done(s, s->icon_insert);
		if (r < 0)
			return r;
	}
	if (errno != 0) {
		s->stats.problems++;
		log_warning_errno(-errno, "cannot read '%s': %m", path);
	}
	if (old) {
		GHashTableIter it;
		const char *gone;

		g_hash_table_iter_init(&it, old);
		while (g_hash_table_iter_next(&it, (void **)&gone, NULL))
			changed_name(s, gone);
	}
	return 0;
}

/* Point dir row `dir_id` at the listing of the real directory `st` is of,
 * reading it when it is new or its stamp changed (once per refresh, however
 * many paths lead to it). */
static int dir_attach_listing(struct scanner *s, long long dir_id,
			      const char *path, const struct stat *st)
{
	long long id = -1, mtime = timespec_ns(st->st_mtim),
		  ctime = timespec_ns(st->st_ctim);
	bool read = false;
	int rc, r;

	sqlite3_bind_int64(s->listing_get, 1, (long long)st->st_dev);
	sqlite3_bind_int64(s->listing_get, 2, (long long)st->st_ino);
	rc = sqlite3_step(s->listing_get);
	if (rc == SQLITE_ROW) {
		id = sqlite3_column_int64(s->listing_get, 0);
		read = (sqlite3_column_int64(s->listing_get, 1) != mtime ||
			sqlite3_column_int64(s->listing_get, 2) != ctime) &&
		       !g_hash_table_contains(s->listings_read, &id);
	}
	(void)sqlite3_reset(s->listing_get);

	sqlite3_bind_int64(s->listing_put, 1, (long long)st->st_dev);
	sqlite3_bind_int64(s->listing_put, 2, (long long)st->st_ino);
	sqlite3_bind_int64(s->listing_put, 3, mtime);
	sqlite3_bind_int64(s->listing_put, 4, ctime);
	if (id < 0 || read) {
		/* before its stamp changes: the names of a listing below
		 * are found by its stamp */
		g_autoptr(GHashTable) old = listing_names(s, id);

		rc = sqlite3_step(s->listing_put);
		if (rc == SQLITE_ROW)
			id = sqlite3_column_int64(s->listing_put, 0);
		(void)sqlite3_reset(s->listing_put);
		if (id < 0)
			return db_log_error(s->db, rc, "cannot update index");
		r = listing_read(s, id, path, old);
		if (r < 0)
			return r;
		g_hash_table_add(s->listings_read, g_memdup2(&id, sizeof(id)));
	}

	sqlite3_bind_int64(s->dir_set_listing, 1, id);
	sqlite3_bind_int64(s->dir_set_listing, 2, dir_id);
	return step_done(s, s->dir_set_listing);
}

/* A directory reached through a symlink must stay inside the base
 * directories too. */
static bool dir_inside(struct scanner *s, const char *path)
{
	_cleanup_free_ char *real = basedirs_real_inside(s->real, path, true);

	return real != NULL;
}

/* Refresh a directory row: stat, and attach its listing again when its
 * stamp changed. */
static long long dir_listing_id(struct scanner *s, long long id)
{
	_cleanup_(sqlite3_finalizep) sqlite3_stmt *q = NULL;

	if (db_prepare(s->db, "SELECT listing_id FROM dir WHERE id = ?1", &q) <
	    0)
		return -1;
	sqlite3_bind_int64(q, 1, id);
	if (sqlite3_step(q) != SQLITE_ROW ||
	    sqlite3_column_type(q, 0) == SQLITE_NULL)
		return -1;
	return sqlite3_column_int64(q, 0);
}

/* A directory row that lists nothing (gone, or leading outside): its old
 * names changed. */
static int dir_detach(struct scanner *s, long long id, long long listing_id,
		      struct stamp stamp)
{
	int r;

	changed_names_of(s, listing_id);
	sqlite3_bind_null(s->dir_set_listing, 1);
	sqlite3_bind_int64(s->dir_set_listing, 2, id);
	r = step_done(s, s->dir_set_listing);
	if (r < 0)
		return r;
	return dir_set_stamp(s, id, stamp);
}

int dir_refresh(struct scanner *s, long long id, struct stamp old,
		const char *path)
{
	long long before, after;
	struct stamp now;
	struct stat st;
	int r;

	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
		now = STAMP_MISSING;
	else
		now = stamp_of(&st);
	if (stamp_eq(now, old))
		return 0;
	s->stats.changed = true;
	/* what it listed, for the names that changed */
	before = s->changes ? dir_listing_id(s, id) : -1;
	if (stamp_eq(now, STAMP_MISSING))
		return dir_detach(s, id, before, STAMP_MISSING);
	if (!dir_inside(s, path)) {
		s->stats.problems++;
		log_warning("'%s' leads outside the icon directories, skipped",
			    path);
		return dir_detach(s, id, before, now);
	}
	r = dir_attach_listing(s, id, path, &st);
	if (r < 0)
		return r;
	after = s->changes ? dir_listing_id(s, id) : -1;
	if (before != after) {
		changed_names_of(s, before);
		changed_names_of(s, after);
	}
	return dir_set_stamp(s, id, now);
}
