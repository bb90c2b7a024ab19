/* Open files of the mounted tree: a source's own bytes (an fd on the file
 * inside a base directory), a rendered PNG, or a synthesized file (the
 * bytes in memory). Opening resolves what the node's lookup found; reads
 * never touch the index. */
#pragma once

#include <glib.h>
#include <stdint.h>
#include <sys/types.h>

#include "tree.h"

struct file {
	int fd;	      /* the source, or -1 */
	GBytes *data; /* or the bytes */
};

/* -EISDIR for a directory, -ESTALE for an unknown ino, -EIO for a source
 * that cannot be rendered. */
int file_open(struct tree *t, struct request *x, enum request_mode mode,
	      uint64_t ino, struct file **ret);
/* Read up to `size` bytes at `off` into `buf`; returns the count or -errno. */
ssize_t file_read(struct file *f, void *buf, size_t size, off_t off);
void file_free(struct file *f);

/* Open, read and close in one: for a kernel that reads without opening. */
ssize_t file_pread(struct tree *t, struct request *x, enum request_mode mode,
		   uint64_t ino, void *buf, size_t size, off_t off);
