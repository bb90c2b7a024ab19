/* The iconfs binary: parses the command line and dispatches subcommands.
 * Each command returns an exit status; errors were logged where they arose. */
#include <errno.h>
#include <getopt.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basedirs.h"
#include "cli.h"
#include "desktop.h"
#include "daemon.h"
#include "db.h"
#include "fs.h"
#include "log.h"
#include "lookup.h"
#include "mountpoint.h"
#include "render.h"
#include "synth.h"
#include "warm.h"
#include "watchdog.h"
#include "index.h"

struct command {
	const char *name;
	const char *usage;
	const char *summary;
	int (*run)(struct cli_options *o);
	int min_args, max_args;
};

int cli_index(const struct cli_options *o, const char *mountpoint,
	      unsigned flags, sqlite3 **ret_db, char ***ret_basedirs)
{
	g_auto(GStrv) bases = basedirs_list(o->icon_dirs, mountpoint);
	struct scan_stats st;
	int r;

	r = index_open(o->db, bases, flags, ret_db, &st);
	if (r < 0)
		return r;
	if (flags & INDEX_PROGRESS)
		printf("%u themes, %u directories read, %llu icons, "
		       "%u problems, %.2f s\n",
		       st.themes, st.dirs_read, st.icons, st.problems,
		       st.seconds);
	if (ret_basedirs)
		*ret_basedirs = g_steal_pointer(&bases);
	return 0;
}

static char *default_mountpoint(const struct cli_options *o)
{
	return o->mountpoint ? g_strdup(o->mountpoint)
			     : basedirs_default_mountpoint();
}

/* `iconfs index`: refresh, then store the synthesized files of the default
 * theme, hicolor and the themes in use, so that the next mount serves them
 * at once. */
static int cmd_index(struct cli_options *o)
{
	_cleanup_(sqlite3_closep) sqlite3 *db = NULL;
	_cleanup_(lookup_freep) struct lookup *l = NULL;
	g_autofree char *mnt = default_mountpoint(o);
	g_autofree char *theme = desktop_theme(o->theme, NULL);
	const char *themes[] = { theme, "hicolor", NULL };
	struct synth *s = NULL;
	int r;

	r = cli_index(o, mnt, INDEX_PROGRESS | INDEX_CHECK, &db, NULL);
	if (r >= 0)
		r = lookup_new(db, &l);
	if (r >= 0)
		r = synth_new(&s);
	if (r >= 0)
		r = synth_store(s, l, db, themes, -1);
	if (r < 0)
		log_warning_errno(r, "cannot store synthesized files: %m");
	synth_free(s);
	return r < 0 ? 1 : 0;
}

static int parse_int(const char *s, int min, int max, int *ret)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -EINVAL;
	*ret = (int)v;
	return 0;
}

int cli_parse_int(const char *s, int min, int max, const char *what, int *ret)
{
	if (parse_int(s, min, max, ret) < 0)
		return log_error_errno(-EINVAL, "invalid %s '%s' (%d to %d)",
				       what, s, min, max);
	return 0;
}

/* `iconfs lookup --batch`: "NAME SIZE [SCALE]" per input line, one output
 * line each: the path, or an empty line when nothing resolves. */
static int lookup_batch(struct lookup *l, const char *theme, int scale)
{
	char line[4096];

	while (fgets(line, sizeof(line), stdin)) {
		g_auto(GStrv) f = g_strsplit(g_strstrip(line), " ", -1);
		g_autofree char *path = NULL;
		int size, sc = scale, ext;

		if (g_strv_length(f) < 2 ||
		    parse_int(f[1], 1, 65536, &size) < 0 ||
		    (f[2] && parse_int(f[2], 1, 3, &sc) < 0)) {
			log_error("invalid query '%s' (NAME SIZE [SCALE])",
				  line);
			return 2;
		}
		if (lookup_icon(l, theme, f[0], size, sc, &path, &ext) < 0)
			printf("\n");
		else
			printf("%s\n", path);
	}
	return 0;
}

static int cmd_lookup(struct cli_options *o)
{
	_cleanup_(sqlite3_closep) sqlite3 *db = NULL;
	_cleanup_(lookup_freep) struct lookup *l = NULL;
	g_autofree char *mnt = default_mountpoint(o);
	g_autofree char *theme = desktop_theme(o->theme, NULL);
	g_autofree char *path = NULL;
	int size, ext, r;

	if (o->batch != (o->n_args == 0)) {
		log_error("lookup takes NAME SIZE, or --batch and no operands");
		return 2;
	}
	if (!o->batch && parse_int(o->args[1], 1, 65536, &size) < 0) {
		log_error("invalid size '%s'", o->args[1]);
		return 2;
	}
	/* no integrity check (it reads the whole file) for one lookup */
	if (cli_index(o, mnt, 0, &db, NULL) < 0 || lookup_new(db, &l) < 0)
		return 2;
	if (o->batch)
		return lookup_batch(l, theme, o->scale);
	r = lookup_icon(l, theme, o->args[0], size, o->scale, &path, &ext);
	if (r == -ENOENT)
		return 1;
	if (r < 0)
		return 2;
	printf("%s\n", path);
	return 0;
}

static int cmd_status(struct cli_options *o)
{
	return cli_status(o) < 0 ? 1 : 0;
}

/* The shared layer a mount reads: --shared-db, else the system's when it
 * exists; none with --no-shared-db. */
static const char *mount_shared_db(const struct cli_options *o)
{
	if (o->no_shared_db)
		return NULL;
	if (o->shared_db)
		return o->shared_db;
	return access(CLI_SHARED_DB, F_OK) == 0 ? CLI_SHARED_DB : NULL;
}

/* Where a mount in the background logs when the machine has no journal
 * nor syslog: $XDG_STATE_HOME/iconfs/iconfs.log. */
static void open_background_log(void)
{
	g_autofree char *dir =
		g_build_filename(g_get_user_state_dir(), "iconfs", NULL);
	g_autofree char *file = g_build_filename(dir, "iconfs.log", NULL);

	(void)g_mkdir_with_parents(dir, 0700);
	log_open_background(file);
}

static int cmd_mount(struct cli_options *o)
{
	_cleanup_(sqlite3_closep) sqlite3 *db = NULL;
	g_autofree char *mnt = default_mountpoint(o);
	g_autofree char *theme = NULL;
	g_auto(GStrv) bases = NULL;
	enum desktop_source source;
	struct fs_options fo;
	int ready_fd = -1, r;

	/* Into the background before anything starts a thread (GIO does, to
	 * read the desktop's setting; the index, the workers): a fork keeps
	 * only the calling thread. The command returns when the mount
	 * serves, with its status; what the daemon logs goes to the
	 * journal. */
	if (!o->foreground) {
		r = daemon_begin(&ready_fd);
		if (r < 0) {
			log_error_errno(r, "cannot fork: %m");
			return 1;
		}
		open_background_log();
	}
	theme = desktop_theme(o->theme, &source);
	/* the index is opened, checked, migrated and refreshed once, here */
	if (cli_index(o, mnt,
		      INDEX_CHECK | (o->foreground && isatty(STDOUT_FILENO)
					     ? INDEX_PROGRESS
					     : 0),
		      &db, &bases) < 0) {
		daemon_ready(&ready_fd, 1);
		return 1;
	}
	sqlite3_close_v2(TAKE_PTR(db));
	fo = (struct fs_options){
		.db = o->db,
		.shared_db = mount_shared_db(o),
		.basedirs = bases,
		.theme = theme,
		.theme_source = desktop_source_name(source),
		.theme_pinned = o->theme != NULL,
		.mountpoint = mnt,
		.workers = (unsigned)o->workers,
		.ready_fd = ready_fd,
	};
	return fs_mount(&fo) < 0 ? 1 : 0;
}

static int cmd_umount(struct cli_options *o)
{
	return mountpoint_unmount(o->mountpoint) < 0 ? 1 : 0;
}

static int cmd_render(struct cli_options *o)
{
	return cli_prerender(o) < 0 ? 1 : 0;
}

static int cmd_read_ahead(struct cli_options *o)
{
	return warm_reader_main(o->args[0]);
}

static int cmd_watchdog_ping(struct cli_options *o)
{
	return watchdog_ping_main(o->args[0]);
}

static int cmd_mount_guard(struct cli_options *o)
{
	return mountpoint_guard_main(o->mountpoint);
}

static int cmd_render_worker(struct cli_options *o)
{
	(void)o;
	return render_worker_main();
}

static const struct command commands[] = {
	{ "index", "[--db FILE] [--icon-dirs D1:D2:...]",
	  "build or refresh the index", cmd_index, 0, 0 },
	{ "lookup",
	  "[--db FILE] [--icon-dirs ...] [--theme T] [--scale S] NAME SIZE",
	  "print the resolved source file; exit 1 if none", cmd_lookup, 0, 2 },
	{ "mount",
	  "[--db FILE] [--shared-db FILE|--no-shared-db] [--icon-dirs ...] "
	  "[--theme T] [-f] [MOUNTPOINT]",
	  "serve the flattened icon tree", cmd_mount, 0, 1 },
	{ "render",
	  "[--db FILE | --shared-db FILE] [--icon-dirs ...] "
	  "[--theme T|--all-themes] [--sizes 16,24,...] [--scales 1,2] "
	  "[--budget MIB]",
	  "pre-render into the user's table or the shared layer", cmd_render, 0,
	  0 },
	{ "status",
	  "[--db FILE] [--shared-db FILE|--no-shared-db] [MOUNTPOINT]",
	  "what is indexed and cached, sizes, counts", cmd_status, 0, 1 },
	{ "umount", "MOUNTPOINT", "unmount a mounted iconfs", cmd_umount, 1,
	  1 },
	{ "render-worker", "", NULL, cmd_render_worker, 0, 0 },
	{ "read-ahead", "MOUNTPOINT", NULL, cmd_read_ahead, 1, 1 },
	{ "watchdog-ping", "MOUNTPOINT", NULL, cmd_watchdog_ping, 1, 1 },
	{ "mount-guard", "MOUNTPOINT", NULL, cmd_mount_guard, 1, 1 },
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: iconfs COMMAND [OPTIONS]\n\n"
		"A read-only FUSE filesystem of the installed icon themes.\n\n"
		"commands:\n");
	for (size_t i = 0; i < ELEMENTSOF(commands); i++)
		if (commands[i].summary)
			fprintf(f, "  %-8s %s\n", commands[i].name,
				commands[i].summary);
	fprintf(f, "\n'iconfs COMMAND --help' shows a command's options.\n");
}

static void command_usage(const struct command *c, FILE *f)
{
	fprintf(f, "usage: iconfs %s %s\n\n%s\n", c->name, c->usage,
		c->summary);
	fprintf(f,
		"\n"
		"  --db FILE         index file (default "
		"$XDG_CACHE_HOME/iconfs/index.sqlite)\n"
		"  --icon-dirs LIST  base directories, colon-separated\n"
		"  --theme T         theme (default: GTK or KDE setting, "
		"else hicolor)\n"
		"  --scale S         scale for lookup (default 1)\n"
		"  --sizes LIST      sizes for render (default 16,22,24,32,"
		"48,64 and\n"
		"                    the sizes the theme declares, up to "
		"256)\n"
		"  --scales LIST     scales for render (default 1,2; 1 with "
		"--sizes)\n"
		"  --all-themes      render: every installed theme\n"
		"  --budget MIB      render: stop when the renders fill this "
		"much\n"
		"                    (default 512, 1024 for the shared "
		"layer)\n"
		"  --shared-db FILE  the shared layer of renders "
		"(default " CLI_SHARED_DB ")\n"
		"  --no-shared-db    mount: do not read the shared layer\n"
		"  --workers N       render worker processes (default 2)\n"
		"  --batch           lookup: read 'NAME SIZE [SCALE]' lines "
		"from stdin\n"
		"  -f                stay in the foreground\n"
		"  -d                debug log\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "db", required_argument, NULL, 'D' },
		{ "icon-dirs", required_argument, NULL, 'I' },
		{ "theme", required_argument, NULL, 't' },
		{ "scale", required_argument, NULL, 's' },
		{ "sizes", required_argument, NULL, 'S' },
		{ "scales", required_argument, NULL, 'C' },
		{ "all-themes", no_argument, NULL, 'A' },
		{ "budget", required_argument, NULL, 'U' },
		{ "shared-db", required_argument, NULL, 'H' },
		{ "no-shared-db", no_argument, NULL, 'N' },
		{ "workers", required_argument, NULL, 'w' },
		{ "batch", no_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{},
	};
	struct cli_options o = { .scale = 1, .workers = 2 };
	g_autofree char *shared_db = NULL;
	int budget_mib = 0;
	g_autofree char *db = NULL, *mountpoint = NULL;
	const struct command *cmd = NULL;
	int c;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (streq(argv[1], "--help") || streq(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (streq(argv[1], "--version")) {
		printf("iconfs %s\n", ICONFS_VERSION);
		return 0;
	}
	for (size_t i = 0; i < ELEMENTSOF(commands); i++)
		if (streq(argv[1], commands[i].name))
			cmd = &commands[i];
	if (!cmd) {
		log_error("unknown command '%s'", argv[1]);
		usage(stderr);
		return 2;
	}

	/* a helper of a daemon in the background logs where the daemon does */
	if (!cmd->summary)
		log_open_inherited();
	argc--;
	argv++;
	while ((c = getopt_long(argc, argv, "+fdh", longopts, NULL)) != -1) {
		switch (c) {
		case 'D':
			o.db = optarg;
			break;
		case 'I':
			o.icon_dirs = optarg;
			break;
		case 't':
			o.theme = optarg;
			break;
		case 's':
			if (cli_parse_int(optarg, 1, 3, "scale", &o.scale) < 0)
				return 2;
			break;
		case 'S':
			o.sizes = optarg;
			break;
		case 'C':
			o.scales = optarg;
			break;
		case 'A':
			o.all_themes = true;
			break;
		case 'U':
			if (cli_parse_int(optarg, 1, 1 << 20, "budget (MiB)",
					  &budget_mib) < 0)
				return 2;
			break;
		case 'H':
			o.shared_db = optarg;
			break;
		case 'N':
			o.no_shared_db = true;
			break;
		case 'w':
			if (cli_parse_int(optarg, 1, 16, "worker count",
					  &o.workers) < 0)
				return 2;
			break;
		case 'B':
			o.batch = true;
			break;
		case 'f':
			o.foreground = true;
			break;
		case 'd':
			log_set_level(LOG_LEVEL_DEBUG);
			break;
		case 'h':
			command_usage(cmd, stdout);
			return 0;
		case 'V':
			printf("iconfs %s\n", ICONFS_VERSION);
			return 0;
		default:
			command_usage(cmd, stderr);
			return 2;
		}
	}
	o.args = argv + optind;
	o.n_args = argc - optind;
	if (o.n_args < cmd->min_args || o.n_args > cmd->max_args) {
		command_usage(cmd, stderr);
		return 2;
	}
	/* absolute and without "." or "..": the mount table names it so */
	if ((streq(cmd->name, "mount") || streq(cmd->name, "umount") ||
	     streq(cmd->name, "mount-guard")) &&
	    o.n_args > 0)
		o.mountpoint = mountpoint = g_canonicalize_filename(o.args[0],
								    NULL);
	/* absolute: the mount daemon changes its directory to / */
	o.db = db = o.db ? g_canonicalize_filename(o.db, NULL)
			 : basedirs_default_db();
	if (o.shared_db)
		o.shared_db = shared_db =
			g_canonicalize_filename(o.shared_db, NULL);
	if (o.theme && o.all_themes) {
		log_error("--theme and --all-themes exclude each other");
		return 2;
	}
	o.budget = (budget_mib	  ? budget_mib
		    : o.shared_db ? CLI_SHARED_BUDGET_MIB
				  : CLI_BUDGET_MIB) *
		   (1LL << 20);
	return cmd->run(&o);
}
