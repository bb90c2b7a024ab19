/* The mount's state, shared by its two halves: fs.c (the FUSE handlers and
 * their table) and mount.c (start-up, the loop, shutdown). struct fs owns
 * every part a request reaches (the tree, content, synthesized files, the
 * prefetch, the working set, the watcher) and the request counters.
 * Private to those two files. */
#pragma once

#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "counters.h"
#include "tree.h"

struct fs {
	const char *db_path;
	long long budget; /* bytes the stored renders may fill */
	struct tree *tree;
	struct content *content;
	struct synth *synth;
	struct generation generation; /* of the index; the watcher bumps it */
	struct fs_counters counters; /* counters.h */
	pthread_key_t request_key; /* each thread's struct request */
	bool no_open; /* the kernel reads files without opening them */
	struct fuse_session *se;
	struct prefetch *prefetch;
	struct resolved *resolved; /* what the prefetch and the read ahead resolved */
	struct warm *warm;
	struct watch *watch;
};

/* The low-level handlers (fs.c). */
extern const struct fuse_lowlevel_ops fs_ops;

/* The calling thread's struct request (request.h), its connection to the
 * index opened on first use (freed by fs_request_free, the thread key's
 * destructor) and its lookup cache brought to the index generation now.
 * NULL when the index cannot be opened. */
struct request *fs_request(struct fs *fs);
void fs_request_free(void *p);
