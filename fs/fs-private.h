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

/* The FUSE loop's threads: at most this many, of which this many stay
 * when idle (the others end after their request). */
#define FS_THREADS_MAX	8
#define FS_THREADS_IDLE 4

struct fs {
	const char *db_path;
	long long budget; /* bytes the stored renders may fill */
	struct tree *tree;
	struct content *content;
	struct synth *synth;
	struct generation generation; /* of the index; the watcher bumps it */
	struct fs_counters counters; /* counters.h */
	pthread_key_t request_key; /* each thread's struct request */
	/* the requests of threads that ended, for the next ones (a burst
	 * past FS_THREADS_IDLE starts and ends threads by the dozen); at
	 * most FS_THREADS_MAX, under `pool_lock` */
	pthread_mutex_t pool_lock;
	struct request *pool[FS_THREADS_MAX];
	unsigned pooled;
	bool no_open; /* the kernel reads files without opening them */
	struct fuse_session *se;
	struct prefetch *prefetch;
	struct resolved *resolved; /* what the prefetch and the read ahead resolved */
	struct warm *warm;
	struct watch *watch;
};

/* The low-level handlers (fs.c). */
extern const struct fuse_lowlevel_ops fs_ops;

/* The calling thread's struct request (request.h), with its lookup cache
 * brought to the index generation now: one a thread that ended left in
 * the pool, else made, its connection to the index opened. NULL when the
 * index cannot be opened. */
struct request *fs_request(struct fs *fs);
/* The request key's destructor: the ending thread's request goes to the
 * pool (its page cache given back), or is freed when the pool is full. */
void fs_request_release(void *p);
/* Free what the pool holds, once no thread can take from it. */
void fs_request_pool_free(struct fs *fs);
