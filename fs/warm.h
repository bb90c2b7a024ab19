/* The working set: the files of the mounted tree that the user's programs
 * read, learned across sessions and read ahead at the next mount. No
 * toolkit can know which icons a desktop's login loads; the mount sees
 * them. Requests note the files they read (a bounded set in memory, no
 * SQL); a thread stores the notes in the index (table warm, schema 005)
 * now and then and at the end, and at start another one reads the files
 * of the last sessions through the mount itself, at idle priority, so that the
 * kernel holds their entries, attributes and pages before the login's
 * programs ask for them: those programs then send no request at all. Each
 * file is stored with the default theme of the session that read it, and
 * only those of sessions with the same theme are read ahead: what a
 * session of another theme setting read (before a switch, another
 * desktop's) would cost this login the requests, for programs that no
 * longer read it; it stays in the set for a login that does. The
 * reads are made by a process of its own (helper.h): a daemon thread
 * blocked on its own mount would keep a killed daemon from exiting.
 * Bounded: the WARM_FILES paths read last. (A file the read ahead
 * brought in is not read again through the daemon, so its time stays that
 * of its last read by a program: an age limit would forget what every
 * login reads.) */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#define WARM_FILES 4096

struct warm;

/* Called on the read ahead's thread (idle priority) before each path is
 * read through the mount: the daemon's heavy part of that read can be done
 * there, ahead of the request. */
typedef void (*warm_prepare_fn)(const char *path, void *userdata);

/* Start the threads: read ahead through `mountpoint` what the index at
 * `db_path` remembers of the sessions of default theme `theme` (each path
 * given to `prepare` first, when not NULL), and store notes until
 * warm_stop(). */
int warm_start(const char *db_path, const char *mountpoint, const char *theme,
	       warm_prepare_fn prepare, void *userdata, struct warm **ret);

/* The default theme is now `theme`: what programs read from now on is
 * noted with it (no-op without a warm). */
void warm_set_theme(struct warm *w, const char *theme);

/* Store what was noted and end the threads. Call once nothing can wait on
 * the mount any more (the FUSE session is gone): a read ahead may be
 * waiting for an answer. */
void warm_stop(struct warm *w);

/* Whether thread `tid` is the read ahead's process (false without a
 * warm): its requests teach nothing and render nothing. */
bool warm_is_reader(struct warm *w, pid_t tid);

/* A program read the file at `path` (relative to the mount); takes a copy. */
void warm_note(struct warm *w, const char *path);


/* Files read ahead at start so far, and whether that pass is over. */
unsigned long long warm_read_ahead(struct warm *w, bool *ret_done);
