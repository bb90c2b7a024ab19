/* The index generation: a number the watcher moves on at every change of
 * the index. Everything built from the index (a thread's lookup cache,
 * listings, synthesized files, icons resolved ahead) is dated by it and
 * thrown away, or never kept, once it is older. Owned by struct fs;
 * lock-free. Header only. */
#pragma once

#include <stdatomic.h>
#include <stdint.h>

struct generation {
	atomic_uint_least64_t value;
};

static inline uint64_t generation_now(struct generation *g)
{
	return atomic_load(&g->value);
}

/* The index changed (the watcher, before it drops what was built). */
static inline void generation_bump(struct generation *g)
{
	atomic_fetch_add(&g->value, 1);
}
