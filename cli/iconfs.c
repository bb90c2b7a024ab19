/* The iconfs binary: parses the command line and dispatches subcommands.
 * Each command returns an exit status; errors were logged where they arose. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basedirs.h"
#include "cli.h"
#include "desktop.h"
#include "db.h"
#include "log.h"
#include "lookup.h"
#include "mountpoint.h"
#include "render.h"
#include "helper.h"
#include "view.h"
#include "warm.h"
#include "watchdog.h"
#include "index.h"

struct command {
	const char *name;
	const char *operands;
	const char *summary; /* NULL: a helper process, not for users */
	int (*run)(struct cli_options *o);
	int min_args, max_args;
	unsigned opts;	/* the options it takes (OPT_*) */
	unsigned flags; /* CMD_* */
};

enum {
	/* its operand is a mountpoint: made absolute and without "." or
	 * "..", as the mount table names it */
	CMD_MOUNTPOINT = 1 << 0,
	/* it opens the user's index: --db, or the default place, resolved
	 * (basedirs_index_path) before it runs */
	CMD_INDEX = 1 << 1,
};

/* `iconfs index`: refresh, then store the synthesized files of the default
 * theme, of those its toolkit always loads and of the themes in use, so
 * that the next mount serves them at once. */
static int cmd_index(struct cli_options *o)
{
	_cleanup_(sqlite3_closep) sqlite3 *db = NULL;
	g_autofree char *mnt = cli_mountpoint(o);
	g_autofree char *theme = desktop_theme(o->theme, NULL);

	if (cli_index(o, mnt, INDEX_PROGRESS | INDEX_CHECK, NULL, &db, NULL) < 0)
		return 1;
	return cli_store_synth(db, theme, o->rules) < 0 ? 1 : 0;
}

/* `iconfs lookup --batch`: "NAME SIZE [SCALE]" per input line, one output
 * line each: the path, or an empty line when nothing resolves. An exit
 * status: 2 at the first malformed line. */
static int lookup_batch(struct lookup *l, const char *theme, int scale)
{
	char line[4096];

	while (fgets(line, sizeof(line), stdin)) {
		g_auto(GStrv) f = g_strsplit(g_strstrip(line), " ", -1);
		g_autofree char *path = NULL;
		int size, sc = scale, ext;

		if (g_strv_length(f) < 2 ||
		    cli_int(f[1], 1, 65536, &size) < 0 ||
		    (f[2] && cli_int(f[2], 1, 3, &sc) < 0)) {
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
	g_autofree char *mnt = cli_mountpoint(o);
	g_autofree char *theme = desktop_theme(o->theme, NULL);
	g_autofree char *path = NULL, *scratch = NULL;
	int size, ext, status = 0, r;

	if (o->batch ? o->n_args != 0 : o->n_args != 2) {
		cli_usage_error("'iconfs lookup' takes NAME SIZE, or --batch "
				"and no operands");
		return 2;
	}
	if (!o->batch && cli_int(o->args[1], 1, 65536, &size) < 0) {
		cli_usage_error("invalid size '%s' (1 to 65536)", o->args[1]);
		return 2;
	}
	/* other directories than the user's never go into the user's index
	 * (a mount may be serving it): a scratch index, gone afterwards */
	if (o->icon_dirs && o->db_default) {
		scratch = g_dir_make_tmp("iconfs-lookup-XXXXXX", NULL);
		if (!scratch) {
			log_error_errno(-errno, "cannot make a temporary "
						"index: %m");
			return 1;
		}
		o->db = g_build_filename(scratch, "index.sqlite", NULL);
	}
	/* no integrity check (it reads the whole file) for one lookup */
	o->theme_lenient = true;
	r = cli_index(o, mnt, 0, NULL, &db, NULL);
	if (r >= 0)
		r = lookup_new(db, o->rules, &l);
	if (r >= 0 && o->batch)
		status = lookup_batch(l, theme, o->scale);
	else if (r >= 0)
		r = lookup_icon(l, theme, o->args[0], size, o->scale, &path,
				&ext);
	if (r >= 0 && path)
		printf("%s\n", path);
	if (scratch) {
		lookup_free(TAKE_PTR(l));
		sqlite3_close_v2(TAKE_PTR(db));
		db_unlink(o->db, true);
		(void)rmdir(scratch);
		g_free(o->db);
	}
	return r < 0 ? 1 : status;
}

static int cmd_status(struct cli_options *o)
{
	return cli_status(o) < 0 ? 1 : 0;
}

static int cmd_mount(struct cli_options *o)
{
	return cli_mount(o);
}

static int cmd_umount(struct cli_options *o)
{
	g_autofree char *mnt = cli_mountpoint(o);

	return mountpoint_unmount(mnt) < 0 ? 1 : 0;
}

static int cmd_render(struct cli_options *o)
{
	return cli_prerender(o) < 0 ? 1 : 0;
}

static int cmd_flatpak(struct cli_options *o)
{
	return cli_flatpak(o);
}

static int cmd_read_ahead(struct cli_options *o)
{
	return helper_read_ahead_main(o->args[0]);
}

static int cmd_store_synth(struct cli_options *o)
{
	return cli_store_synth_main(o->args[0], o->args[1], o->args[2]);
}

static int cmd_watchdog_ping(struct cli_options *o)
{
	return helper_watchdog_ping_main(o->args[0], VIEW_XATTR_THEME);
}

static int cmd_mount_guard(struct cli_options *o)
{
	return mountpoint_guard_main(o->mountpoint);
}

/* Options: each command accepts those of its mask (and -d, -h). */
enum {
	OPT_DB = 1 << 0,
	OPT_ICON_DIRS = 1 << 1,
	OPT_THEME = 1 << 2,
	OPT_SCALE = 1 << 3,
	OPT_SIZES = 1 << 4,
	OPT_SCALES = 1 << 5,
	OPT_ALL_THEMES = 1 << 6,
	OPT_BUDGET = 1 << 7,
	OPT_SHARED_DB = 1 << 8,
	OPT_NO_SHARED_DB = 1 << 9,
	OPT_WORKERS = 1 << 10,
	OPT_BATCH = 1 << 11,
	OPT_FOREGROUND = 1 << 12,
	OPT_ALWAYS = 1 << 13, /* -d, -h */
	OPT_ALL_APPS = 1 << 14,
	OPT_RULES = 1 << 15,
};

static const struct cli_option {
	const char *name; /* long name; NULL for a short-only one */
	int val;	  /* getopt's value: the short letter or a code */
	bool arg;
	unsigned bit;
	const char *help;
	bool short_form; /* also `-VAL` */
} cli_options[] = {
	{ "db", 'D', true, OPT_DB,
	  "--db FILE          the index (default "
	  "$XDG_CACHE_HOME/iconfs/index.sqlite)" },
	{ "icon-dirs", 'I', true, OPT_ICON_DIRS,
	  "--icon-dirs LIST   base directories, colon-separated (the last "
	  "one\n"
	  "                     plays /usr/share/pixmaps)" },
	{ "theme", 't', true, OPT_THEME,
	  "--theme T          the theme (default: the desktop's setting, "
	  "else\n"
	  "                     hicolor); an installed one" },
	{ "scale", 's', true, OPT_SCALE, "--scale S          1 to 3 (default 1)" },
	{ "rules", 'R', true, OPT_RULES,
	  "--rules gtk|kde|qt resolve as that toolkit does (default: by\n"
	  "                     XDG_CURRENT_DESKTOP, KDE kde, LXQt qt, else gtk;\n"
	  "                     spec: the specification as written)" },
	{ "batch", 'B', false, OPT_BATCH,
	  "--batch            read 'NAME SIZE [SCALE]' lines from stdin" },
	{ "all-themes", 'A', false, OPT_ALL_THEMES,
	  "--all-themes       every installed theme" },
	{ "sizes", 'S', true, OPT_SIZES,
	  "--sizes LIST       sizes, comma-separated (default 16,22,24,32,48,"
	  "64\n"
	  "                     and the theme's own, up to 256)" },
	{ "scales", 'C', true, OPT_SCALES,
	  "--scales LIST      scales (default 1,2; 1 with --sizes)" },
	{ "budget", 'U', true, OPT_BUDGET,
	  "--budget MIB       the renders kept fill at most this much "
	  "(default 512,\n"
	  "                     48 for the shared layer)" },
	{ "shared-db", 'H', true, OPT_SHARED_DB,
	  "--shared-db FILE   the shared layer of renders (default " CLI_SHARED_DB
	  ")" },
	{ "no-shared-db", 'N', false, OPT_NO_SHARED_DB,
	  "--no-shared-db     do not read the shared layer" },
	{ "workers", 'w', true, OPT_WORKERS,
	  "--workers N        render worker processes, 1 to 16 (default 2)" },
	{ "all", 'L', false, OPT_ALL_APPS,
	  "--all              every installed Flatpak app (for disable: every "
	  "one\n"
	  "                     iconfs enabled)" },
	{ NULL, 'f', false, OPT_FOREGROUND,
	  "-f                 stay in the foreground, logging to stderr", true },
	{ "debug", 'd', false, OPT_ALWAYS, "-d, --debug        debug messages",
	  true },
	{ "help", 'h', false, OPT_ALWAYS, "-h, --help         this help", true },
};

static int cmd_help(struct cli_options *o);

static const struct command commands[] = {
	{ "index", "", "build or refresh the index", cmd_index, 0, 0,
	  OPT_DB | OPT_ICON_DIRS, CMD_INDEX },
	{ "lookup", "NAME SIZE",
	  "print the file the mount would serve for an icon; exit 1 if none",
	  cmd_lookup, 0, 2,
	  OPT_DB | OPT_ICON_DIRS | OPT_THEME | OPT_SCALE | OPT_BATCH |
		  OPT_RULES,
	  CMD_INDEX },
	{ "mount", "[MOUNTPOINT]",
	  "serve the flattened icon tree (default $XDG_RUNTIME_DIR/iconfs)",
	  cmd_mount, 0, 1,
	  OPT_DB | OPT_SHARED_DB | OPT_NO_SHARED_DB | OPT_ICON_DIRS |
		  OPT_THEME | OPT_WORKERS | OPT_BUDGET | OPT_FOREGROUND |
		  OPT_RULES,
	  CMD_MOUNTPOINT | CMD_INDEX },
	{ "render", "",
	  "pre-render into the user's table or the shared layer", cmd_render,
	  0, 0,
	  OPT_DB | OPT_SHARED_DB | OPT_ICON_DIRS | OPT_THEME | OPT_ALL_THEMES |
		  OPT_SIZES | OPT_SCALES | OPT_BUDGET | OPT_WORKERS |
		  OPT_RULES,
	  CMD_INDEX },
	{ "status", "[MOUNTPOINT]",
	  "what is indexed, cached and mounted; exit 1 if not mounted",
	  cmd_status, 0, 1, OPT_DB | OPT_SHARED_DB | OPT_NO_SHARED_DB,
	  CMD_MOUNTPOINT | CMD_INDEX },
	{ "umount", "[MOUNTPOINT]", "unmount an iconfs mount of this user",
	  cmd_umount, 0, 1, 0, CMD_MOUNTPOINT },
	{ "flatpak", "enable|disable|status [APP...]",
	  "let Flatpak apps see the mount", cmd_flatpak, 1, 64, OPT_ALL_APPS },
	{ "help", "[COMMAND]", "this help, or a command's", cmd_help, 0, 1,
	  0 },
	{ "read-ahead", "MOUNTPOINT", NULL, cmd_read_ahead, 1, 1, 0 },
	{ "store-synth", "INDEX THEME RULES", NULL, cmd_store_synth, 3, 3, 0 },
	{ "watchdog-ping", "MOUNTPOINT", NULL, cmd_watchdog_ping, 1, 1, 0 },
	{ "mount-guard", "MOUNTPOINT", NULL, cmd_mount_guard, 1, 1, 0,
	  CMD_MOUNTPOINT },
};

static const struct command *command_find(const char *name)
{
	for (size_t i = 0; i < ELEMENTSOF(commands); i++)
		if (streq(name, commands[i].name))
			return &commands[i];
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: iconfs COMMAND [OPTIONS] [OPERANDS]\n\n"
		"The installed icon themes as one read-only FUSE filesystem.\n\n"
		"commands:\n");
	for (size_t i = 0; i < ELEMENTSOF(commands); i++)
		if (commands[i].summary)
			fprintf(f, "  %-8s %s\n", commands[i].name,
				commands[i].summary);
	fprintf(f, "\n'iconfs COMMAND --help' shows a command's options; "
		   "'man iconfs' tells more.\n"
		   "Exit status: 0 success, 1 failure, 2 usage error.\n");
}

static void command_usage(const struct command *c, FILE *f)
{
	fprintf(f, "usage: iconfs %s%s%s%s\n\n%s\n\noptions:\n", c->name,
		c->opts ? " [OPTIONS]" : "", *c->operands ? " " : "",
		c->operands, c->summary ? c->summary : "");
	for (size_t i = 0; i < ELEMENTSOF(cli_options); i++)
		if (cli_options[i].bit & (c->opts | OPT_ALWAYS))
			fprintf(f, "  %s\n", cli_options[i].help);
}

static int cmd_help(struct cli_options *o)
{
	const struct command *c;

	if (o->n_args == 0) {
		usage(stdout);
		return 0;
	}
	c = command_find(o->args[0]);
	if (!c || !c->summary) {
		cli_usage_error("unknown command '%s' (see 'iconfs help')",
				o->args[0]);
		return 2;
	}
	command_usage(c, stdout);
	return 0;
}

static const struct cli_option *option_of(int val)
{
	for (size_t i = 0; i < ELEMENTSOF(cli_options); i++)
		if (cli_options[i].val == val)
			return &cli_options[i];
	return NULL;
}

/* getopt's tables from cli_options: every long name, and the letters
 * of the options that have a short form. */
static void getopt_tables(struct option *longopts, char *shortopts)
{
	size_t n = 0, l = 0;

	for (size_t i = 0; i < ELEMENTSOF(cli_options); i++) {
		const struct cli_option *co = &cli_options[i];

		if (co->name)
			longopts[n++] = (struct option){
				co->name, co->arg ? required_argument
						  : no_argument,
				NULL, co->val
			};
		if (co->short_form)
			shortopts[l++] = (char)co->val;
	}
	shortopts[l] = '\0';
}

/* Apply option `c` (with `optarg`) to `o`: 0, 1 when it answered (--help),
 * 2 for a usage error. */
static int apply_option(const struct command *cmd, int c,
			struct cli_options *o, int *budget_mib)
{
	int r;

	switch (c) {
	case 'D':
		o->db = optarg;
		break;
	case 'I':
		o->icon_dirs = optarg;
		break;
	case 't':
		o->theme = optarg;
		break;
	case 's':
		return cli_parse_int(optarg, 1, 3, "scale", &o->scale) < 0 ? 2 : 0;
	case 'S':
		o->sizes = optarg;
		break;
	case 'C':
		o->scales = optarg;
		break;
	case 'A':
		o->all_themes = true;
		break;
	case 'U':
		return cli_parse_int(optarg, 1, 1 << 20, "budget (MiB)",
				     budget_mib) < 0 ? 2 : 0;
	case 'H':
		o->shared_db = optarg;
		break;
	case 'N':
		o->no_shared_db = true;
		break;
	case 'w':
		return cli_parse_int(optarg, 1, 16, "worker count",
				     &o->workers) < 0 ? 2 : 0;
	case 'B':
		o->batch = true;
		break;
	case 'R':
		r = lookup_rules_from_name(optarg);
		if (r < 0) {
			cli_usage_error("invalid rules '%s' (gtk, kde, qt or spec)",
					optarg);
			return 2;
		}
		o->rules = r;
		break;
	case 'L':
		o->all_apps = true;
		break;
	case 'f':
		o->foreground = true;
		break;
	case 'd':
		log_set_level(LOG_LEVEL_DEBUG);
		break;
	case 'h':
		command_usage(cmd, stdout);
		return 1;
	}
	return 0;
}

/* The options of `cmd` in argv (argv[0] the command): 0, 1 when one
 * answered (--help), 2 for a usage error (said on stderr). */
static int parse_options(const struct command *cmd, int argc, char **argv,
			 struct cli_options *o, int *budget_mib)
{
	struct option longopts[ELEMENTSOF(cli_options) + 1] = { 0 };
	char shortopts[ELEMENTSOF(cli_options) + 1];
	int c, r;

	getopt_tables(longopts, shortopts);
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const struct cli_option *co = option_of(c);

		if (c == '?' || c == ':') {
			const struct cli_option *missing = option_of(optopt);

			if (optopt && missing && missing->arg)
				cli_usage_error("option '%s' needs a value",
						argv[optind - 1]);
			else
				cli_usage_error("unknown option '%s'",
						argv[optind - 1]);
			fprintf(stderr, "see 'iconfs %s --help'\n", cmd->name);
			return 2;
		}
		if (!co || !(co->bit & (cmd->opts | OPT_ALWAYS))) {
			cli_usage_error("option '%s%s' does not apply to "
					"'iconfs %s'",
					co && co->name ? "--" : "-",
					co && co->name ? co->name
						       : (char[]){ (char)c, 0 },
					cmd->name);
			fprintf(stderr, "see 'iconfs %s --help'\n", cmd->name);
			return 2;
		}
		r = apply_option(cmd, c, o, budget_mib);
		if (r)
			return r;
	}
	o->args = argv + optind;
	o->n_args = argc - optind;
	return 0;
}

/* What the options and operands must agree on: 0 or 2 (said). */
static int check_options(const struct command *cmd,
			 const struct cli_options *o)
{
	if (o->n_args < cmd->min_args || o->n_args > cmd->max_args) {
		cli_usage_error("'iconfs %s' takes %s%s", cmd->name,
				*cmd->operands ? "" : "no operands",
				cmd->operands);
		fprintf(stderr, "see 'iconfs %s --help'\n", cmd->name);
		return 2;
	}
	if (o->theme && o->all_themes) {
		cli_usage_error("--theme and --all-themes exclude each other");
		return 2;
	}
	if (o->shared_db && o->no_shared_db) {
		cli_usage_error("--shared-db and --no-shared-db exclude each "
				"other");
		return 2;
	}
	return 0;
}

/* The first argument when it is not a command: 0 or 2 when it answered,
 * -1 when it is (maybe) one. */
static int global_argument(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (streq(argv[1], "--help") || streq(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (streq(argv[1], "--version") || streq(argv[1], "-V")) {
		printf("iconfs %s\n", ICONFS_VERSION);
		return 0;
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct cli_options o = {
		.scale = 1,
		.workers = 2,
		.rules = lookup_rules_for_desktop(getenv("XDG_CURRENT_DESKTOP")),
	};
	g_autofree char *shared_db = NULL;
	int budget_mib = 0, r;
	g_autofree char *db = NULL, *db_why = NULL, *mountpoint = NULL;
	bool in_memory;
	const struct command *cmd;

	r = global_argument(argc, argv);
	if (r >= 0)
		return r;
	cmd = command_find(argv[1]);
	if (!cmd) {
		cli_usage_error("unknown command '%s' (see 'iconfs help')",
				argv[1]);
		return 2;
	}
	/* a helper of a daemon in the background logs where the daemon does */
	if (!cmd->summary)
		log_open_inherited();
	r = parse_options(cmd, argc - 1, argv + 1, &o, &budget_mib);
	if (r == 0)
		r = check_options(cmd, &o);
	if (r)
		return r == 1 ? 0 : r;
	if ((cmd->flags & CMD_MOUNTPOINT) && o.n_args > 0)
		o.mountpoint = mountpoint = g_canonicalize_filename(o.args[0],
								    NULL);
	/* absolute: the mount daemon changes its directory to / */
	o.db_default = !o.db;
	in_memory = false;
	if (cmd->flags & CMD_INDEX) {
		basedirs_index_path(o.db, &db, &db_why, &in_memory);
		o.db = db;
		o.db_why = db_why;
	}
	if (o.shared_db)
		o.shared_db = shared_db =
			g_canonicalize_filename(o.shared_db, NULL);
	o.budget = (budget_mib	  ? budget_mib
		    : o.shared_db ? CLI_SHARED_BUDGET_MIB
		    : in_memory	  ? CLI_MEMORY_BUDGET_MIB
				  : CLI_BUDGET_MIB) *
		   (1LL << 20);
	r = cmd->run(&o);
	return cli_usage_errors() ? 2 : r;
}
