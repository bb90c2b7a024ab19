/* A new index started as a copy of the machine-wide one: the shared
 * layer's index tables (the system's base directories, indexed by the
 * service that builds the layer) copied into an index that was never
 * refreshed, so that its first refresh reads only what differs (the
 * user's own directories, and what changed since the layer was built)
 * instead of every directory of every theme: a first login costs about
 * what a second one does. The refresh then checks every stamp as always,
 * so a stale layer costs time, never a wrong answer. */
#pragma once

#include <sqlite3.h>

/* Seed `db` from the layer at `layer` when `db` was never refreshed, holds
 * no icon, and is to index every base directory of the layer's that
 * exists (`basedirs`, NULL-terminated): 1 when seeded, 0 when there was
 * nothing to do or the layer cannot serve (missing, another version's,
 * not trusted: one log line says so, and every directory is read). */
int seed_from_layer(sqlite3 *db, const char *layer, char *const *basedirs);
