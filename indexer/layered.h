/* A user's index layered over the machine's. The shared layer also holds
 * the machine's index of the system's base directories, built by the
 * service that builds the layer. A user's index that fits it (the user's
 * base directories include every one of the machine's that exists) holds
 * a copy of its small tables (base directories, themes and their
 * subdirectories, directories, listings: about 0.5 MB) but none of its
 * icon rows (about 10 MB): a listing marked `below` has the icons of the
 * machine's listing of the same directory (device and inode) with the same
 * stamp, read from the machine's index, which every connection attaches
 * read-only and immutable as schema `machine`. A directory the refresh
 * reads (the user's own, or one that changed since the machine's index was
 * built) keeps its icons in the user's file, as in an index that is not
 * layered. So a first login costs about what a second one does, and the
 * user's file stays small.
 *
 * The two are joined by stamp, not by row id, so a machine's index that
 * the service replaced by a newer build (renamed over the old one) gives
 * the same answers for every directory that did not change; one that
 * changed has no rows below until the user's refresh reads it (which its
 * change also triggers). Every query that reads icon rows is built by
 * layered_icons_sql(), or layered_name_rows_sql() for one name's. */
#pragma once

#include <sqlite3.h>
#include <stdbool.h>

/* At index_open: layer `db` (a user's index) over the machine's index in
 * the shared layer at `layer` (NULL: the one it is layered over, if any;
 * with `layer_none`, none) when that can serve and fits `basedirs`
 * (NULL-terminated). An index that is new, not layered yet or layered over
 * another file is to be emptied and started as the copy: *ret_copy gets
 * the layer's path (g_free), and layered_copy() makes the copy before the
 * index's refresh. One that was layered over an index that can no longer
 * serve (missing, another version's, not trusted, of other directories,
 * not to be read) is emptied and read from the directories: one log line
 * says why. 1 when layered (or to be), 0 when not, -errno when the index
 * could not be written. */
int layered_open(sqlite3 *db, const char *layer, bool layer_none,
		 char *const *basedirs, char **ret_copy);

/* Empty the index and start it again as the copy of the machine's in
 * `layer` (attached by layered_open), a first login's 0.5 MB of small
 * tables: 1 when done; 0 when it could not be copied, the index then read
 * from the directories (logged); -errno when it could not be written. The
 * mount makes it once mounted, as it does the refresh: 55 M of the 106 M
 * instructions a first login's mount made before READY=1. */
int layered_copy(sqlite3 *db, const char *layer);

/* Attach the machine's index to a further connection of `db`'s index, if
 * it is layered: 0, or -errno when the machine's index cannot be read (the
 * icons below are then missing on this connection; logged). */
int layered_attach(sqlite3 *db);

/* Whether `db`'s index is layered over the machine's (attached to it). */
bool layered_over_machine(sqlite3 *db);

/* Whether `db`'s index is still the machine's as it was copied: layered,
 * its first refresh read no directory, its existing base directories are
 * in the machine's order, and nothing changed since (the generation is the
 * one recorded then). What was derived from the machine's index (its
 * synthesized files) then holds for it too. */
bool layered_as_machine(sqlite3 *db);

/* A DELETE of the index's own rows of derived table `table` (theme, kind,
 * made_by, generation) that the machine's holds the same of, or NULL when
 * the index is not layered_as_machine: the user's file need not keep what
 * every user reads from below. g_free() it. */
char *layered_shadowed_sql(sqlite3 *db, const char *table);

/* SQL that reads rows derived from the index: `arm` is a SELECT in which
 * {schema} names the schema of the derived table and of the meta table
 * dating it; the result is `arm` over the index's own rows, then (while
 * layered_as_machine) UNION ALL over the machine's; `outer` (may be NULL)
 * wraps that where it says {arms}. g_free() it. */
char *layered_derived_sql(sqlite3 *db, const char *arm, const char *outer);

/* After index_open's first refresh of an index layered_copy() started
 * again as the machine's copy, which read `dirs_read` directories: record
 * whether it still is the machine's (layered_as_machine). */
int layered_settled(sqlite3 *db, bool restarted, unsigned dirs_read);

/* SQL that reads every icon row of `db`'s index: `arm` is a SELECT in which
 * {icon} stands for a table of (name, listing_id, ext), listing_id being a
 * listing of this index. The result is `arm` over the index's own rows,
 * UNION ALL the same over the machine's rows below when layered; `outer`
 * (may be NULL) wraps that where it says {arms}. g_free() it. */
char *layered_icons_sql(sqlite3 *db, const char *arm, const char *outer);

/* What a lookup reads instead, without a join per row: SQL for the icon
 * rows of one name (bound as ?1), (listing_id, ext, below). A row of the
 * index's own has below 0 and one of its listings; a row of the machine's
 * (layered only) has below 1 and one of the machine's listings, whose
 * icons the index's listing of the same directory and stamp has: the
 * caller maps those with layered_listing_below_sql(), once per directory
 * rather than once per icon. g_free() it. */
char *layered_name_rows_sql(sqlite3 *db);

/* An SQL expression for the id of the machine's listing whose icons the
 * index's listing `ul` (an alias the caller's query gives it) has, NULL
 * where it has its own or the index is not layered. A static string. */
const char *layered_listing_below_sql(sqlite3 *db);
