/* The daemon's helper processes that wait on its own mount, which a thread
 * of the daemon never may (a killed daemon whose thread waits for its own
 * answer could never exit): the working set's reader (warm.h) and the
 * systemd watchdog's pinger (watchdog.h). Their code is here, linked with
 * the C library only, and runs as a program of its own, `iconfs-helper`
 * (cli/iconfs-helper.c, beside iconfs or in libexecdir/iconfs): a second
 * copy of the daemon's libraries would cost each mount a megabyte of PSS
 * all session long (the pinger lives as long as the mount) and 3 ms of
 * CPU at every login (the reader). Where the program is missing, the
 * iconfs binary runs the same code as `iconfs read-ahead` and `iconfs
 * watchdog-ping`. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#define HELPER_PROGRAM	     "iconfs-helper"
#define HELPER_READ_AHEAD    "read-ahead"
#define HELPER_WATCHDOG_PING "watchdog-ping"

/* Start helper `command` (HELPER_READ_AHEAD, HELPER_WATCHDOG_PING) for
 * `mountpoint` (spawn_helper: at idle priority with `idle`), talking on
 * two pipes: *ret_in writes to its stdin, *ret_out reads its stdout.
 * -errno. */
int helper_spawn(const char *command, const char *mountpoint, bool idle,
		 pid_t *ret_pid, int *ret_in, int *ret_out);

/* A path as the working set writes them: relative, no empty, "." or ".."
 * component. The table is the user's own, but a damaged row must not lead
 * outside the mount. */
bool helper_path_ok(const char *path);

/* The read ahead: reads each path of a stdin line below `mountpoint` and
 * answers a line with 0 or the errno. Returns the exit status. */
int helper_read_ahead_main(const char *mountpoint);

/* The pinger: for each byte on stdin, one getxattr of `mountpoint`
 * (`xattr`), then the byte back on stdout. Returns the exit status. */
int helper_watchdog_ping_main(const char *mountpoint, const char *xattr);
