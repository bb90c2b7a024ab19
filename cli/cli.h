/* Command-line plumbing shared by the subcommands (cli.c; one file each for
 * the larger commands: mount.c, status.c, prerender.c; iconfs.c parses the
 * command line and dispatches): the parsed options, usage errors, the
 * index each command opens, the mountpoint and the synthesized files it
 * stores. */
#pragma once

#include <sqlite3.h>
#include <stdbool.h>

#include "index.h"
#include "lookup.h"
#include "macro.h"

/* The machine's shared layer of renders, world-readable, written only by
 * `iconfs render --shared-db` (run as root by iconfs-shared.service). */
#define CLI_SHARED_DB "/var/cache/iconfs/shared.sqlite"
/* `iconfs render` stops once the renders fill this many MiB. */
#define CLI_BUDGET_MIB	      512
#define CLI_SHARED_BUDGET_MIB 48
/* ... and a mount whose index had to go to $XDG_RUNTIME_DIR (memory) */
#define CLI_MEMORY_BUDGET_MIB 64

struct cli_options {
	char *db;	   /* --db, else the default path */
	bool db_default;   /* no --db */
	char *db_why;	   /* why the index is not where asked, or NULL */
	char *icon_dirs;   /* --icon-dirs, NULL for the default list */
	char *theme;	   /* --theme, NULL: the configured default */
	bool theme_lenient; /* an unknown --theme is a warning, not an error */
	char *sizes;	   /* --sizes */
	char *scales;	   /* --scales */
	bool all_themes;   /* --all-themes */
	long long budget;  /* --budget, in bytes */
	char *shared_db;   /* --shared-db */
	bool no_shared_db; /* --no-shared-db */
	int scale;	   /* --scale */
	enum lookup_rules rules; /* --rules, else the desktop's toolkit's */
	bool foreground;   /* -f */
	bool batch;	   /* --batch (lookup) */
	bool all_apps;	   /* --all (flatpak) */
	int workers;	   /* --workers */
	char *mountpoint;  /* first operand of mount/umount */
	char **args;	   /* remaining operands */
	int n_args;
};

/* The shared layer a mount reads (and a new index starts from, seed.h):
 * --shared-db, else the system's when it exists; none with
 * --no-shared-db. */
const char *cli_shared_db(const struct cli_options *o);

/* Open (creating, checking, migrating) the index and bring it up to date
 * with the base directories (index_open, `flags` enum index_open_flags,
 * `watcher` told of each directory the refresh looks at, may be NULL);
 * with INDEX_PROGRESS a summary line on stdout. `mountpoint` is left out of
 * the base directories, which *ret_basedirs gets when not NULL. */
int cli_index(const struct cli_options *o, const char *mountpoint,
	      unsigned flags, const struct scan_watcher *watcher,
	      sqlite3 **ret_db, char ***ret_basedirs);

/* cli_index() in two steps (index_prepare, index_refresh), for the mount,
 * which refreshes once mounted: the first opens the index and gives the
 * base directories; the second refreshes it, checks the --theme and
 * prints the summary line. */
int cli_index_prepare(const struct cli_options *o, const char *mountpoint,
		      unsigned flags, struct index_pending *ret,
		      char ***ret_basedirs);
int cli_index_refresh(const struct cli_options *o, unsigned flags,
		      const struct scan_watcher *watcher,
		      char *const *basedirs, struct index_pending *p);

/* A usage error (exit status 2 for the command, whatever it returns):
 * logged as one line. */
void cli_usage_error(const char *fmt, ...) _printf_(1, 2);
unsigned cli_usage_errors(void);

/* `s` as an integer from min to max: 0, or -EINVAL (nothing logged). */
int cli_int(const char *s, int min, int max, int *ret);

/* An integer option from min to max; -EINVAL with a log line naming
 * `what` otherwise. */
int cli_parse_int(const char *s, int min, int max, const char *what, int *ret);

/* The mountpoint operand, else the default one
 * (basedirs_default_mountpoint()); g_free. */
char *cli_mountpoint(const struct cli_options *o);

/* Store the synthesized files (index.theme, icon-theme.cache, name lists)
 * of the themes a session of `theme` reads (synth_session_themes) that the
 * index does not hold yet, so that a mount serves them at once instead of
 * building them in the first request that wants them (about 0.3 s of CPU
 * for Papirus, right as a login's programs start). Logged on failure. */
int cli_store_synth(sqlite3 *db, const char *theme, enum lookup_rules rules);
/* `iconfs store-synth INDEX THEME RULES`, the process that does it (not a
 * command for people). Returns the exit status. */
int cli_store_synth_main(const char *path, const char *theme,
			 const char *rules);

int cli_status(struct cli_options *o);
/* `iconfs mount`: serve the flattened tree on the mountpoint, in the
 * background unless -f (returning once it serves); an exit status. */
int cli_mount(struct cli_options *o);
/* `iconfs render`: pre-render a theme's names at the given sizes into the
 * blob table, at idle priority; resumable (what is stored is skipped). */
int cli_prerender(struct cli_options *o);
/* `iconfs flatpak enable|disable|status`: Flatpak user overrides that let
 * apps see the mount; an exit status. */
int cli_flatpak(struct cli_options *o);
