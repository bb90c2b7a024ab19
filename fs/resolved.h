/* The resolved cache: icons resolved before their LOOKUP. A listing's
 * prefetch (prefetch.h) and the working set's read ahead (warm.h) resolve icons (index lookup, stored render) on
 * their own threads and keep the result here, and the LOOKUP that follows
 * takes it instead of querying the index and the blob table again. Below
 * the tree: the request path visits it once, before the index. Bounded
 * (about 1 MiB), one index generation at a time; thread-safe. */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "content.h"

struct resolved;

struct resolved *resolved_new(void);
struct resolved *resolved_free(struct resolved *p);

/* Keep what was resolved for icon `name` of the view at `generation`
 * (moved from *ic) for the LOOKUP that follows; a NULL `p` keeps nothing.
 * The listings' prefetch and the working set's read ahead fill it. */
void resolved_keep(struct resolved *p, const char *theme, int size, int scale,
		   const char *name, uint64_t generation,
		   struct icon_content *ic);

/* What a prefetch resolved for icon `name` of the view at `generation`,
 * moved into *ret (icon_content_clear): true, once; false when there is
 * none (or `p` is NULL). */
bool resolved_take(struct resolved *p, const char *theme, int size, int scale,
		   const char *name, uint64_t generation,
		   struct icon_content *ret);

/* How many lookups took a result kept for them (resolved_take). */
unsigned long long resolved_taken(struct resolved *p);
