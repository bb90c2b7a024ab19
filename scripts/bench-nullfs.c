/* The FUSE round-trip limit for scripts/bench: a trivial low-level
 * filesystem answering from memory. One directory of N empty files named
 * 0..N-1; entries and attributes are never cached by the kernel, so every
 * stat is one request. Usage: bench-nullfs MOUNTPOINT N */
#include <errno.h>
#include <fuse_lowlevel.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned long n_files;

static int fill(fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	if (ino == FUSE_ROOT_ID) {
		st->st_mode = S_IFDIR | 0555;
		st->st_nlink = 2;
		return 0;
	}
	if (ino - 2 >= n_files)
		return -ENOENT;
	st->st_mode = S_IFREG | 0444;
	st->st_nlink = 1;
	st->st_size = 1234;
	return 0;
}

static void null_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e = { 0 };
	char *end;
	unsigned long i = strtoul(name, &end, 10);

	if (parent != FUSE_ROOT_ID || *end || i >= n_files) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	e.ino = i + 2;
	fill(e.ino, &e.attr);
	fuse_reply_entry(req, &e);
}

static void null_getattr(fuse_req_t req, fuse_ino_t ino,
			 struct fuse_file_info *fi)
{
	struct stat st;

	(void)fi;
	if (fill(ino, &st) < 0)
		fuse_reply_err(req, ENOENT);
	else
		fuse_reply_attr(req, &st, 0);
}

static const struct fuse_lowlevel_ops ops = {
	.lookup = null_lookup,
	.getattr = null_getattr,
};

int main(int argc, char **argv)
{
	char *args[] = { argv[0], "-o", "ro,fsname=nullfs", NULL };
	struct fuse_args fargs = FUSE_ARGS_INIT(3, args);
	struct fuse_loop_config *cfg;
	struct fuse_session *se;
	int r;

	if (argc != 3) {
		fprintf(stderr, "usage: bench-nullfs MOUNTPOINT N\n");
		return 2;
	}
	n_files = strtoul(argv[2], NULL, 10);
	se = fuse_session_new(&fargs, &ops, sizeof(ops), NULL);
	if (!se || fuse_set_signal_handlers(se) < 0 ||
	    fuse_session_mount(se, argv[1]) < 0)
		return 1;
	cfg = fuse_loop_cfg_create();
	r = fuse_session_loop_mt(se, cfg);
	fuse_loop_cfg_destroy(cfg);
	fuse_session_unmount(se);
	fuse_remove_signal_handlers(se);
	fuse_session_destroy(se);
	return r ? 1 : 0;
}
