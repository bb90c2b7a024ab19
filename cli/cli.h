/* Command-line plumbing shared by the subcommands: the parsed options and
 * the index each command opens. */
#pragma once

#include <sqlite3.h>
#include <stdbool.h>

struct cli_options {
	char *db; /* --db, else the default path */
	char *icon_dirs; /* --icon-dirs, NULL for the default list */
	char *theme; /* --theme, NULL: the configured default */
	char *sizes; /* --sizes */
	int scale; /* --scale */
	bool foreground; /* -f */
	bool debug; /* -d */
	bool batch; /* --batch (lookup) */
	int workers; /* --workers */
	char *mountpoint; /* first operand of mount/umount */
	char **args; /* remaining operands */
	int n_args;
};

/* Open (creating, migrating) the index and bring it up to date with the base
 * directories. `mountpoint` is left out of the base directories. */
int cli_open_index(const struct cli_options *o, const char *mountpoint,
		   bool progress, sqlite3 **ret_db, char ***ret_basedirs);
