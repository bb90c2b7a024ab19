/* Open files; see file.h. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "file.h"

int file_open(struct tree *t, struct request *x, enum request_mode mode,
	      uint64_t ino, struct file **ret)
{
	struct file *f = g_new0(struct file, 1);
	struct tree_node n = { 0 };
	void *data = NULL;
	size_t len = 0;
	int r;

	f->fd = -1;
	r = tree_node_settle(t, x, mode, ino, &n, NULL);
	if (r < 0) {
		g_free(f);
		return r;
	}
	if (n.kind == TREE_INDEX_THEME || n.kind == TREE_ICON_CACHE)
		r = synth_file(x->synth, x->l, n.theme, tree_synth_file(n.kind),
			       &f->data);
	else if (tree_kind_is_dir(n.kind))
		r = -EISDIR;
	else if (n.content.native)
		r = f->fd =
			content_open_source(x->content, n.content.source);
	else {
		r = content_load(x->content, x->blobs, &n.content,
				 mode == REQUEST_STORED_ONLY, &data, &len);
		if (r >= 0)
			f->data = g_bytes_new_with_free_func(data, len, free,
							     data);
	}
	tree_node_clear(&n);
	if (r < 0) {
		file_free(f);
		return r;
	}
	*ret = f;
	return 0;
}

ssize_t file_read(struct file *f, void *buf, size_t size, off_t off)
{
	const char *data;
	size_t len;
	ssize_t n;

	if (off < 0)
		return -EINVAL;
	if (f->fd >= 0) {
		n = pread(f->fd, buf, size, off);
		return n < 0 ? -errno : n;
	}
	data = g_bytes_get_data(f->data, &len);
	if ((size_t)off >= len)
		return 0;
	n = (ssize_t)(len - off < size ? len - off : size);
	memcpy(buf, data + off, n);
	return n;
}

void file_free(struct file *f)
{
	if (!f)
		return;
	if (f->fd >= 0)
		(void)close(f->fd);
	if (f->data)
		g_bytes_unref(f->data);
	g_free(f);
}

ssize_t file_pread(struct tree *t, struct request *x, enum request_mode mode,
		   uint64_t ino, void *buf, size_t size, off_t off)
{
	struct file *f = NULL;
	ssize_t n;
	int r;

	r = file_open(t, x, mode, ino, &f);
	if (r < 0)
		return r;
	n = file_read(f, buf, size, off);
	file_free(f);
	return n;
}
