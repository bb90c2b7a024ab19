/* Icons resolved ahead of their LOOKUP: a listing's prefetch and the
 * working set's read ahead resolve icons (index lookup, stored render) on
 * their own threads and keep the result here, and the LOOKUP that follows
 * takes it instead of querying the index and the blob table again. Below
 * the tree: the request path visits it once, before the index. Bounded
 * (about 1 MiB), one index generation at a time; thread-safe. */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "content.h"

struct ahead;

struct ahead *ahead_new(void);
struct ahead *ahead_free(struct ahead *p);

/* Keep what was resolved for icon `name` of the view at `generation`
 * (moved from *ic) for the LOOKUP that follows; a NULL `p` keeps nothing.
 * The listings' prefetch and the working set's read ahead fill it. */
void ahead_keep(struct ahead *p, const char *theme, int size, int scale,
		   const char *name, uint64_t generation,
		   struct icon_content *ic);

/* What a prefetch resolved for icon `name` of the view at `generation`,
 * moved into *ret (icon_content_clear): true, once; false when there is
 * none (or `p` is NULL). */
bool ahead_take(struct ahead *p, const char *theme, int size, int scale,
		   const char *name, uint64_t generation,
		   struct icon_content *ret);

/* How many lookups took a result kept for them (ahead_take). */
unsigned long long ahead_taken(struct ahead *p);
