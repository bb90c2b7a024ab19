/* Rendering a listed size view ahead of its readers. `ls -l`, a file
 * manager or a backup tool stat the entries one at a time, each waiting for
 * its render on one worker; a prefetch renders the listed icons in the
 * background on every render worker at once, so that those stats find them
 * done (the content layer renders each icon once, whoever asks first, and
 * a PNG of the exact size renders nothing), and keeps what it resolved for
 * each icon in resolved.h until its LOOKUP takes it.
 *
 * A listing by itself renders nothing (`find`, `ls`, a locate indexer or
 * a backup scan walk millions of entries): a listed view only waits, and
 * its prefetch starts when a program asks for the attributes of one of
 * its entries. One job per view and index generation; a few jobs queued
 * at most; idle when all is done. */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "resolved.h"
#include "content.h"
#include "lookup.h"

struct prefetch;

/* `threads` lookers, each with its own connection to the index at
 * `db_path`, resolving by `rules`; `content` and `resolved` (the
 * resolved cache, where what they resolve is kept) are borrowed. */
int prefetch_new(const char *db_path, enum lookup_rules rules, unsigned threads,
		 struct content *content, struct resolved *resolved,
		 struct prefetch **ret);
struct prefetch *prefetch_free(struct prefetch *p);

/* Directory `dir` was listed: the icons `names` of a view of `theme` at
 * size×scale (a reference is taken; symbolic names skipped when
 * `skip_symbolic`), from the index of `generation`. Nothing starts yet. */
void prefetch_listed(struct prefetch *p, uint64_t dir, const char *theme,
		     int size, int scale, GPtrArray *names, bool skip_symbolic,
		     uint64_t generation);

/* A program asks for the attributes of an entry of directory `dir`: the
 * prefetch of its listed view starts (once). True when `dir` is a listed
 * view whose entries are being stat'ed. */
bool prefetch_stat(struct prefetch *p, uint64_t dir);

/* Whether the entries of directory `dir` are being stat'ed (prefetch_stat
 * was called for it): a listing of it gives their attributes. */
bool prefetch_statted(struct prefetch *p, uint64_t dir);

