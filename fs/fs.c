/* The FUSE low-level handlers and the session; see fs.h. Every FUSE thread
 * gets its own read-only SQLite connection on first use. */
#include <errno.h>
#include <fuse_lowlevel.h>
#include <glib.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "content.h"
#include "daemon.h"
#include "db.h"
#include "index.h"
#include "desktop.h"
#include "file.h"
#include "fs.h"
#include "fs-private.h"
#include "listing.h"
#include "mountpoint.h"
#include "resolved.h"
#include "prefetch.h"
#include "log.h"
#include "synth.h"
#include "time-util.h"
#include "tree.h"
#include "view.h"
#include "warm.h"
#include "watch.h"
#include "watchdog.h"

#define FS_TIMEOUT TREE_TIMEOUT

/* Longest a request waits for an SQLite lock (readers of a WAL index
 * normally never wait). */
#define FS_READ_BUSY_MS 1000
/* How long one READDIRPLUS reply may wait for renders (dirplus_entry). */
#define FS_DIRPLUS_BUDGET_MS 1000
static struct fs *fs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static void fs_request_free(struct request *x)
{
	lookup_free(x->l);
	blob_reader_free(x->blobs);
	(void)sqlite3_close_v2(x->db);
	g_free(x);
}

void fs_request_release(void *p)
{
	struct request *x = p;
	struct fs *fs = x->fs;

	/* what a burst cached stays out of the heap; the schema and the
	 * statements, the costly part to make, stay */
	db_release_cache(x->db);
	pthread_mutex_lock(&fs->pool_lock);
	if (fs->pooled < ELEMENTSOF(fs->pool)) {
		fs->pool[fs->pooled++] = x;
		x = NULL;
	}
	pthread_mutex_unlock(&fs->pool_lock);
	if (x)
		fs_request_free(x);
}

void fs_request_pool_free(struct fs *fs)
{
	while (fs->pooled > 0)
		fs_request_free(fs->pool[--fs->pooled]);
}

/* A request of the pool, else NULL. */
static struct request *fs_request_pooled(struct fs *fs)
{
	struct request *x = NULL;

	pthread_mutex_lock(&fs->pool_lock);
	if (fs->pooled > 0)
		x = fs->pool[--fs->pooled];
	pthread_mutex_unlock(&fs->pool_lock);
	return x;
}

struct request *fs_request(struct fs *fs)
{
	struct request *x = pthread_getspecific(fs->request_key);
	uint64_t now = generation_now(&fs->generation);

	if (!x && (x = fs_request_pooled(fs)))
		(void)pthread_setspecific(fs->request_key, x);
	if (x) {
		if (x->generation_seen != now) {
			lookup_flush(x->l);
			x->generation_seen = now;
		}
		return x;
	}
	/* The index was opened, checked and migrated at start: a request
	 * thread only connects, read-only, and never waits long for a lock. */
	FS_COUNT(fs, contexts);
	x = g_new0(struct request, 1);
	if (index_connect(fs->db_path, DB_QUERY_ONLY, FS_READ_BUSY_MS, &x->db) <
		    0 ||
	    lookup_new(x->db, tree_rules(fs->tree), &x->l) < 0 ||
	    content_reader_new(fs->content, x->db, &x->blobs) < 0) {
		fs_request_free(x);
		return NULL;
	}
	x->generation_seen = now;
	x->fs = fs;
	x->content = fs->content;
	x->synth = fs->synth;
	x->generation = &fs->generation;
	x->resolved = fs->resolved;
	(void)pthread_setspecific(fs->request_key, x);
	return x;
}

/* What request `req` may do: the working set's read ahead never renders,
 * it only brings what is stored into the kernel. */
static enum request_mode fs_req_mode(struct fs *fs, fuse_req_t req)
{
	return warm_is_reader(fs->warm, fuse_req_ctx(req)->pid)
		       ? REQUEST_STORED_ONLY
		       : REQUEST_RENDER;
}

/* An entry for tree_lookup's answer `r`: provisional attributes (1) are
 * not cached, so that the first stat or read asks for the exact ones. */
static void fill_entry(struct fuse_entry_param *e, uint64_t ino,
		       const struct stat *st, int r)
{
	memset(e, 0, sizeof(*e));
	e->ino = ino;
	e->attr = *st;
	e->attr_timeout = r > 0 ? 0 : FS_TIMEOUT;
	e->entry_timeout = FS_TIMEOUT;
}

static void fs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fs *fs = fs_of(req);
	struct request *x = fs_request(fs);
	enum request_mode mode = fs_req_mode(fs, req);
	struct fuse_entry_param e;
	struct stat st;
	double negative_timeout = 0;
	uint64_t ino;
	int r;

	FS_COUNT(fs, lookups);
	/* a program stats an entry of a listed view: render the view ahead */
	if (x && mode == REQUEST_RENDER)
		(void)prefetch_stat(fs->prefetch, parent);
	/* a LOOKUP renders nothing: what is not stored yet is rendered
	 * when its size is asked for */
	r = x ? tree_lookup(fs->tree, x,
			    mode == REQUEST_RENDER ? REQUEST_DEFER : mode,
			    parent, name, &ino, &st, &negative_timeout)
	      : -EIO;
	if (r == -ENOENT) {
		/* A negative entry: the kernel remembers the miss. */
		FS_COUNT(fs, negative);
		memset(&e, 0, sizeof(e));
		e.entry_timeout = negative_timeout;
		fuse_reply_entry(req, &e);
		return;
	}
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	fill_entry(&e, ino, &st, r);
	fuse_reply_entry(req, &e);
}

static void fs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	tree_forget(fs_of(req)->tree, ino, nlookup);
	fuse_reply_none(req);
}

static void fs_forget_multi(fuse_req_t req, size_t count,
			    struct fuse_forget_data *forgets)
{
	for (size_t i = 0; i < count; i++)
		tree_forget(fs_of(req)->tree, forgets[i].ino,
			    forgets[i].nlookup);
	fuse_reply_none(req);
}

static void fs_getattr(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct fs *fs = fs_of(req);
	struct request *x = fs_request(fs);
	struct stat st;
	int r;

	(void)fi;
	FS_COUNT(fs, getattrs);
	r = x ? tree_node_settle(fs->tree, x, fs_req_mode(fs, req), ino, NULL,
				 &st)
	      : -EIO;
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		fuse_reply_attr(req, &st, FS_TIMEOUT);
}

/* A directory handle; the listing is built on the first readdir, so that an
 * opendir answered from the kernel's cached listing costs nothing. */
struct fs_dir {
	struct listing *ls;
};

static void fs_opendir(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct fs_dir *d = g_new0(struct fs_dir, 1);

	(void)ino;
	fi->fh = (uintptr_t)d;
	fi->cache_readdir = 1;
	fi->keep_cache = 1;
	if (fuse_reply_open(req, fi) == -ENOENT)
		g_free(d);
}

/* What a READDIRPLUS reply gives attributes with (dirplus_entry). */
struct dirplus {
	struct request *x;
	enum request_mode mode; /* the request's; stored only past the budget */
	bool files; /* a view whose entries programs stat: files too */
	long long budget_end;
};

/* One entry of a READDIRPLUS reply with its attributes, as a LOOKUP would
 * give them (the kernel counts it as one): `ls -l`, file managers and
 * backup tools then stat no entry again, one request per chunk of the
 * listing instead of a LOOKUP per entry. A listing by itself renders
 * nothing and resolves no icon (`find`, `ls`): files get attributes only
 * in a view whose entries programs stat (prefetch_stat), and there an
 * icon not rendered yet is waited for (the view's prefetch renders it on
 * every worker, in this order) until the chunk's budget is spent; after
 * that only stored ones get attributes. Without them (ino 0, and always
 * for "." and "..") the kernel looks the entry up when asked. */
static void dirplus_entry(struct fs *fs, struct dirplus *dp, uint64_t dir,
			  const char *name, unsigned char type,
			  struct fuse_entry_param *e)
{
	enum request_mode mode;
	struct stat st;
	double negative_timeout;
	uint64_t ino;
	int r;

	if (!dp->x || streq(name, ".") || streq(name, ".."))
		return;
	if (type != DT_DIR && !dp->files)
		return;
	mode = now_ms() >= dp->budget_end ? REQUEST_STORED_ONLY : dp->mode;
	r = tree_lookup(fs->tree, dp->x, mode, dir, name, &ino, &st,
			&negative_timeout);
	if (r >= 0) {
		fill_entry(e, ino, &st, r);
		FS_COUNT(fs, dirplus);
	}
}

static void fs_readdir_common(fuse_req_t req, fuse_ino_t ino, size_t size,
			      off_t off, struct fuse_file_info *fi, bool plus)
{
	struct fs *fs = fs_of(req);
	struct request *x = fs_request(fs);
	struct fs_dir *d = (struct fs_dir *)(uintptr_t)fi->fh;
	struct dirplus dp = { .x = x,
			      .mode = fs_req_mode(fs, req),
			      .budget_end = now_ms() + FS_DIRPLUS_BUDGET_MS };
	struct listing *ls;
	g_autofree char *buf = NULL;
	size_t used = 0;

	if (!d->ls) {
		int r;

		FS_COUNT(fs, readdirs);
		r = x ? listing_build(fs->tree, x, fs->prefetch, ino, &d->ls)
		      : -EIO;

		if (r < 0) {
			fuse_reply_err(req, -r);
			return;
		}
	}
	ls = d->ls;
	dp.files = plus && prefetch_statted(fs->prefetch, ino);
	buf = g_malloc(size);
	for (off_t i = off; i >= 0 && (guint)i < listing_count(ls); i++) {
		char nbuf[NAME_MAX + 1];
		unsigned char type;
		uint64_t child;
		const char *name =
			listing_entry(ls, (unsigned)i, nbuf, &type, &child);
		size_t n;

		if (plus) {
			struct fuse_entry_param e = { 0 };

			/* what does not fit is not looked up (nor counted) */
			if (fuse_add_direntry_plus(req, NULL, 0, name, NULL,
						   0) > size - used)
				break;
			e.attr.st_ino = (ino_t)child;
			e.attr.st_mode = type == DT_DIR ? S_IFDIR : S_IFREG;
			dirplus_entry(fs, &dp, ino, name, type, &e);
			n = fuse_add_direntry_plus(req, buf + used, size - used,
						   name, &e, i + 1);
		} else {
			struct stat st = { 0 };
			st.st_ino = (ino_t)child;
			st.st_mode = type == DT_DIR ? S_IFDIR : S_IFREG;
			n = fuse_add_direntry(req, buf + used, size - used,
					      name, &st, i + 1);
		}
		if (n > size - used)
			break;
		used += n;
	}
	fuse_reply_buf(req, buf, used);
}

static void fs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	fs_readdir_common(req, ino, size, off, fi, false);
}

static void fs_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
			   off_t off, struct fuse_file_info *fi)
{
	fs_readdir_common(req, ino, size, off, fi, true);
}

static void fs_releasedir(fuse_req_t req, fuse_ino_t ino,
			  struct fuse_file_info *fi)
{
	struct fs_dir *d = (struct fs_dir *)(uintptr_t)fi->fh;

	(void)ino;
	listing_free(d->ls);
	g_free(d);
	fuse_reply_err(req, 0);
}

static void fs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs *fs = fs_of(req);
	struct request *x = fs_request(fs);
	struct file *f = NULL;
	int r;

	FS_COUNT(fs, opens);
	if ((fi->flags & O_ACCMODE) != O_RDONLY ||
	    fi->flags & (O_TRUNC | O_CREAT)) {
		fuse_reply_err(req, EROFS);
		return;
	}
	/* Where the kernel can do without OPEN (and RELEASE), it is told so
	 * once and keeps every file's pages until the tree invalidates them:
	 * an icon read again costs no request at all. Reads then come by
	 * inode alone. */
	if (fs->no_open) {
		fuse_reply_err(req, ENOSYS);
		return;
	}
	r = x ? file_open(fs->tree, x, fs_req_mode(fs, req), ino, &f)
	      : -EIO;
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	fi->fh = (uintptr_t)f;
	fi->keep_cache = 1;
	if (fuse_reply_open(req, fi) == -ENOENT)
		file_free(f);
}

/* Thread `tid` of a program read file `ino`: it belongs to the working
 * set. */
static void fs_learn(struct fs *fs, pid_t tid, fuse_ino_t ino)
{
	g_autofree char *path = NULL;

	if (!fs->warm || warm_is_reader(fs->warm, tid))
		return;
	path = tree_path(fs->tree, ino);
	if (path)
		warm_note(fs->warm, path);
}

static void fs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct fs *fs = fs_of(req);
	struct file *f = (struct file *)(uintptr_t)fi->fh;
	g_autofree char *buf = g_malloc(size ? size : 1);
	pid_t tid = fuse_req_ctx(req)->pid; /* req is gone once replied to */
	struct request *x;
	ssize_t n;

	FS_COUNT(fs, reads);
	if (f)
		n = file_read(f, buf, size, off);
	else if ((x = fs_request(fs)))
		n = file_pread(fs->tree, x, fs_req_mode(fs, req), ino, buf,
			       size, off);
	else
		n = -EIO;
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
	if (n > 0 && off == 0)
		fs_learn(fs, tid, ino);
}

static void fs_release(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	(void)ino;
	file_free((struct file *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

static void reply_xattr(fuse_req_t req, const char *value, size_t len,
			size_t size)
{
	if (size == 0)
		fuse_reply_xattr(req, len);
	else if (len > size)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, value, len);
}

/* What the VALUE rows of FS_COUNTERS read (counters.h). */
struct fs_snapshot {
	struct fs *fs;
	struct content_counters *c;
	unsigned nodes, negatives;
	size_t node_bytes;
	unsigned long long read_ahead;
	bool read_ahead_done;
	struct mallinfo2 heap;
};

static char *counters_text(struct fs *fs)
{
	struct fs_snapshot s = { .fs = fs, .c = content_counters(fs->content) };
	GString *out = g_string_new(NULL);

	tree_held(fs->tree, &s.nodes, &s.negatives, &s.node_bytes);
	s.read_ahead = warm_read_ahead(fs->warm, &s.read_ahead_done);
	s.heap = mallinfo2();
#define VALUE_ROW(name, value, help) \
	g_string_append_printf(out, #name " %llu\n", (unsigned long long)(value));
#define REQUEST_ROW(name, help) VALUE_ROW(name, fs->counters.name, help)
	FS_COUNTERS(REQUEST_ROW, VALUE_ROW)
#undef REQUEST_ROW
#undef VALUE_ROW
	return g_string_free(out, false);
}

static void fs_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			size_t size)
{
	struct fs *fs = fs_of(req);
	g_autofree char *value = NULL;
	int r = 0;

	if (ino == TREE_ROOT_INO && streq(name, VIEW_XATTR_COUNTERS)) {
		value = counters_text(fs);
	} else {
		FS_COUNT(fs, getxattrs);
		r = tree_getxattr(fs->tree, ino, name, &value);
	}

	if (r < 0)
		fuse_reply_err(req, -r);
	else
		reply_xattr(req, value, strlen(value), size);
}

static void fs_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	g_autoptr(GString) names = g_string_new(NULL);

	if (ino == TREE_ROOT_INO)
		g_string_append_len(names, VIEW_XATTR_COUNTERS,
				    sizeof(VIEW_XATTR_COUNTERS));
	(void)tree_listxattr(fs_of(req)->tree, ino, names);
	reply_xattr(req, names->str, names->len, size);
}

/* Every write path answers EROFS (the mount is also "ro"). */
static void fs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		       int to_set, struct fuse_file_info *fi)
{
	(void)ino, (void)attr, (void)to_set, (void)fi;
	fuse_reply_err(req, EROFS);
}

static void fs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode, dev_t rdev)
{
	(void)parent, (void)name, (void)mode, (void)rdev;
	fuse_reply_err(req, EROFS);
}

static void fs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode)
{
	(void)parent, (void)name, (void)mode;
	fuse_reply_err(req, EROFS);
}

static void fs_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	(void)parent, (void)name;
	fuse_reply_err(req, EROFS);
}

static void fs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		       const char *name)
{
	(void)link, (void)parent, (void)name;
	fuse_reply_err(req, EROFS);
}

static void fs_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname,
		      unsigned int flags)
{
	(void)parent, (void)name, (void)newparent, (void)newname, (void)flags;
	fuse_reply_err(req, EROFS);
}

static void fs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		    const char *newname)
{
	(void)ino, (void)newparent, (void)newname;
	fuse_reply_err(req, EROFS);
}

static void fs_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		     size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)ino, (void)buf, (void)size, (void)off, (void)fi;
	fuse_reply_err(req, EROFS);
}

static void fs_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, struct fuse_file_info *fi)
{
	(void)parent, (void)name, (void)mode, (void)fi;
	fuse_reply_err(req, EROFS);
}

static void fs_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			const char *value, size_t size, int flags)
{
	(void)ino, (void)name, (void)value, (void)size, (void)flags;
	fuse_reply_err(req, EROFS);
}

static void fs_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	(void)ino, (void)name;
	fuse_reply_err(req, EROFS);
}

static void fs_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset,
			 off_t length, struct fuse_file_info *fi)
{
	(void)ino, (void)mode, (void)offset, (void)length, (void)fi;
	fuse_reply_err(req, EROFS);
}

static void fs_init(void *userdata, struct fuse_conn_info *conn)
{
	struct fs *fs = userdata;

	/* No POSIX ACLs (FUSE_CAP_POSIX_ACL stays off): permissions are the
	 * mode bits, and a query for one is ENOTSUP (tree_getxattr). */
	if (conn->capable & FUSE_CAP_NO_OPEN_SUPPORT) {
		conn->want |= FUSE_CAP_NO_OPEN_SUPPORT;
		fs->no_open = true;
	}
	/* Directory listings are cached by the kernel (cache_readdir); let
	 * readdirplus be used adaptively. */
	if (conn->capable & FUSE_CAP_READDIRPLUS_AUTO)
		conn->want |= FUSE_CAP_READDIRPLUS_AUTO;
	conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
}

const struct fuse_lowlevel_ops fs_ops = {
	.init = fs_init,
	.lookup = fs_lookup,
	.forget = fs_forget,
	.forget_multi = fs_forget_multi,
	.getattr = fs_getattr,
	.setattr = fs_setattr,
	.mknod = fs_mknod,
	.mkdir = fs_mkdir,
	.unlink = fs_unlink,
	.rmdir = fs_unlink,
	.symlink = fs_symlink,
	.rename = fs_rename,
	.link = fs_link,
	.open = fs_open,
	.read = fs_read,
	.write = fs_write,
	.release = fs_release,
	.opendir = fs_opendir,
	.readdir = fs_readdir,
	.readdirplus = fs_readdirplus,
	.releasedir = fs_releasedir,
	.setxattr = fs_setxattr,
	.getxattr = fs_getxattr,
	.listxattr = fs_listxattr,
	.removexattr = fs_removexattr,
	.create = fs_create,
	.fallocate = fs_fallocate,
};
