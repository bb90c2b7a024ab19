/* `iconfs status`: what is indexed and cached, and what a mounted daemon
 * counts, built on index_stats(), blob_stats() and the mount's
 * user.iconfs.* attributes. */
#include <errno.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "basedirs.h"
#include "blob.h"
#include "cli.h"
#include "desktop.h"
#include "db.h"
#include "fs.h"
#include "index.h"
#include "layered.h"
#include "view.h"
#include "log.h"

static void print_index(sqlite3 *db)
{
	struct index_stats is;
	struct blob_stats bs;

	if (index_stats(db, &is) >= 0) {
		printf("%-16s %lld\n", "themes", is.themes);
		printf("%-16s %lld\n", "directories", is.dirs);
		printf("%-16s %lld\n", "icons", is.icons);
	}
	if (blob_stats(db, &bs) >= 0) {
		printf("%-16s %lld PNGs, %.1f MiB\n", "rendered", bs.rendered,
		       bs.bytes / 1048576.0);
		printf("%-16s %lld\n", "failed renders", bs.failed);
	}
	if (is.refreshed > 0) {
		time_t t = (time_t)is.refreshed;
		char when[64];

		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S",
			 localtime(&t));
		printf("%-16s %s\n", "last refresh", when);
	}
}

/* The shared layer of renders a mount would read below the user's table. */
static void print_shared(const struct cli_options *o)
{
	const char *path = o->shared_db ? o->shared_db : CLI_SHARED_DB;
	_cleanup_(sqlite3_closep) sqlite3 *db = NULL;
	struct blob_stats bs;

	if (o->no_shared_db)
		return;
	if (!o->shared_db && access(path, F_OK) < 0)
		printf("%-16s none (%s)\n", "shared layer", path);
	else if (blob_layer_check(path) < 0 || db_open_immutable(path, &db) < 0 ||
		 blob_stats(db, &bs) < 0)
		printf("%-16s %s (ignored)\n", "shared layer", path);
	else
		printf("%-16s %s: %lld PNGs, %.1f MiB\n", "shared layer", path,
		       bs.rendered, bs.bytes / 1048576.0);
}

/* The daemon's counters, one per line, and the blob hit rate. */
static void print_counters(char *counters)
{
	unsigned long long hits = 0, renders = 0;
	char *save = NULL;

	for (char *line = strtok_r(counters, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *sp = strchr(line, ' ');

		if (!sp)
			continue;
		*sp = '\0';
		if (streq(line, "blob_hits"))
			hits = strtoull(sp + 1, NULL, 10);
		else if (streq(line, "renders"))
			renders = strtoull(sp + 1, NULL, 10);
		printf("  %-14s %s\n", line, sp + 1);
	}
	if (hits + renders > 0)
		printf("%-16s %.1f%% of rendered files served from the blob "
		       "table\n",
		       "hit rate", 100.0 * hits / (hits + renders));
}

int cli_status(struct cli_options *o)
{
	_cleanup_(sqlite3_closep) sqlite3 *db = NULL;
	g_autofree char *mnt = o->n_args > 0 ? g_strdup(o->args[0])
					     : basedirs_default_mountpoint();
	enum desktop_source source;
	g_autofree char *theme = desktop_theme(o->theme, &source);
	g_autofree char *below = NULL;
	char from[256];
	char value[2048];
	struct stat st;
	ssize_t n;
	int r;

	printf("%-16s %s\n", "index", o->db);
	if (o->db_why)
		printf("%-16s %s\n", "index place", o->db_why);
	if (stat(o->db, &st) < 0) {
		printf("%-16s not built yet (run 'iconfs index')\n", "state");
		return -ENOTCONN;
	}
	r = db_open(o->db, DB_READONLY, &db);
	if (r < 0)
		return r;
	printf("%-16s %.1f MiB\n", "index size", st.st_size / 1048576.0);
	below = db_meta_get_text(db, "below");
	if (below && layered_attach(db) >= 0)
		printf("%-16s %s (the machine index)\n", "layered over",
		       below);
	n = getxattr(mnt, VIEW_XATTR_THEME, value, sizeof(value) - 1);
	if (n > 0) {
		ssize_t m = getxattr(mnt, VIEW_XATTR_THEME_SOURCE, from,
				     sizeof(from) - 1);

		value[n] = '\0';
		from[m > 0 ? m : 0] = '\0';
		printf("%-16s %s (served; from %s)\n", "theme", value, from);
	} else {
		printf("%-16s %s (configured; from %s)\n", "theme", theme,
		       desktop_source_name(source));
	}
	n = getxattr(mnt, VIEW_XATTR_RULES, value, sizeof(value) - 1);
	if (n > 0) {
		value[n] = '\0';
		printf("%-16s %s (served)\n", "rules", value);
	} else {
		printf("%-16s %s (configured; from XDG_CURRENT_DESKTOP)\n",
		       "rules", lookup_rules_name(o->rules));
	}
	print_index(db);
	print_shared(o);

	n = getxattr(mnt, VIEW_XATTR_COUNTERS, value, sizeof(value) - 1);
	if (n < 0) {
		printf("%-16s %s (not mounted)\n", "mountpoint", mnt);
		return -ENOTCONN;
	}
	value[n] = '\0';
	printf("%-16s %s (mounted)\n", "mountpoint", mnt);
	print_counters(value);
	return 0;
}
