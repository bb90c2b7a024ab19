/* Command-line plumbing shared by the subcommands: the parsed options and
 * the index each command opens. */
#pragma once

#include <sqlite3.h>
#include <stdbool.h>

struct cli_options {
	char *db;	  /* --db, else the default path */
	char *icon_dirs;  /* --icon-dirs, NULL for the default list */
	char *theme;	  /* --theme, NULL: the configured default */
	char *sizes;	  /* --sizes */
	int scale;	  /* --scale */
	bool foreground;  /* -f */
	bool batch;	  /* --batch (lookup) */
	int workers;	  /* --workers */
	char *mountpoint; /* first operand of mount/umount */
	char **args;	  /* remaining operands */
	int n_args;
};

enum cli_index_flags {
	CLI_INDEX_PROGRESS = 1 << 0, /* progress and a summary line */
	CLI_INDEX_CHECK = 1 << 1,    /* integrity check first (reads it all) */
};

/* Open (creating, migrating) the index and bring it up to date with the base
 * directories. `mountpoint` is left out of the base directories. */
int cli_open_index(const struct cli_options *o, const char *mountpoint,
		   unsigned flags, sqlite3 **ret_db, char ***ret_basedirs);
