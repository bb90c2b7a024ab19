/* What the commands share (cli.h): usage errors, integers, and the index
 * they open. */
#include <errno.h>
#include <glib.h>
#include <limits.h>
#include <sys/wait.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "basedirs.h"
#include "cli.h"
#include "db.h"
#include "log.h"
#include "index.h"
#include "lookup.h"
#include "subprocess.h"
#include "synth.h"

static unsigned usage_errors;

/* --theme names an installed theme, or it is a usage error that lists
 * them; with `lenient` (lookup, which follows the specification: a
 * missing theme is searched as hicolor), a warning that lists them. */
static int theme_check(sqlite3 *db, const char *theme, bool lenient)
{
	_cleanup_(lookup_freep) struct lookup *l = NULL;
	g_autoptr(GPtrArray) themes = NULL;
	g_autofree char *list = NULL;
	int r;

	r = lookup_new(db, LOOKUP_RULES_GTK, &l); /* any: themes only */
	if (r >= 0)
		r = lookup_themes(l, &themes);
	if (r < 0)
		return log_error_errno(r, "cannot list the themes: %m");
	for (guint i = 0; i < themes->len; i++)
		if (streq(themes->pdata[i], theme))
			return 0;
	g_ptr_array_add(themes, NULL);
	list = g_strjoinv(", ", (char **)themes->pdata);
	if (lenient) {
		log_warning("unknown theme '%s' (installed: %s): looked up as "
			    "the specification says, in hicolor",
			    theme, *list ? list : "none");
		return 0;
	}
	cli_usage_error("unknown theme '%s'; installed: %s", theme,
			*list ? list : "none");
	return -ENOENT;
}

void cli_usage_error(const char *fmt, ...)
{
	g_autofree char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	log_error("%s", msg);
	usage_errors++;
}

unsigned cli_usage_errors(void)
{
	return usage_errors;
}

const char *cli_shared_db(const struct cli_options *o)
{
	if (o->no_shared_db)
		return NULL;
	if (o->shared_db)
		return o->shared_db;
	return access(CLI_SHARED_DB, F_OK) == 0 ? CLI_SHARED_DB : NULL;
}

int cli_index_prepare(const struct cli_options *o, const char *mountpoint,
		      unsigned flags, struct index_pending *ret,
		      char ***ret_basedirs)
{
	g_auto(GStrv) bases = basedirs_list(o->icon_dirs, mountpoint);
	int r;

	/* the default list names directories that need not exist; a list
	 * given by hand should not */
	if (o->icon_dirs) {
		g_auto(GStrv) dirs = g_strsplit(o->icon_dirs, ":", -1);

		for (char **d = dirs; *d; d++)
			if (**d && !g_file_test(*d, G_FILE_TEST_IS_DIR))
				log_warning("icon directory '%s' is not a "
					    "directory: nothing is indexed "
					    "from it",
					    *d);
	}
	r = index_prepare(o->db, cli_shared_db(o), bases,
			  flags | (o->no_shared_db ? INDEX_NOT_LAYERED : 0),
			  ret);
	if (r >= 0)
		*ret_basedirs = g_steal_pointer(&bases);
	return r;
}

int cli_index_refresh(const struct cli_options *o, unsigned flags,
		      const struct scan_watcher *watcher,
		      char *const *basedirs, struct index_pending *p)
{
	struct scan_stats st;
	int r;

	r = index_refresh(p, basedirs, flags, watcher, &st);
	if (r < 0)
		return r;
	if (o->theme) {
		r = theme_check(p->db, o->theme, o->theme_lenient);
		if (r < 0)
			return r;
	}
	if (flags & INDEX_PROGRESS)
		printf("%u themes, %u directories read, %llu icons, "
		       "%u problems, %.2f s\n",
		       st.themes, st.dirs_read, st.icons, st.problems,
		       st.seconds);
	return 0;
}

int cli_index(const struct cli_options *o, const char *mountpoint,
	      unsigned flags, const struct scan_watcher *watcher,
	      sqlite3 **ret_db, char ***ret_basedirs)
{
	_cleanup_(index_pending_done) struct index_pending p = { 0 };
	g_auto(GStrv) bases = NULL;
	int r;

	r = cli_index_prepare(o, mountpoint, flags, &p, &bases);
	if (r >= 0)
		r = cli_index_refresh(o, flags, watcher, bases, &p);
	if (r < 0)
		return r;
	if (ret_basedirs)
		*ret_basedirs = g_steal_pointer(&bases);
	*ret_db = TAKE_PTR(p.db);
	return 0;
}

int cli_int(const char *s, int min, int max, int *ret)
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
	if (cli_int(s, min, max, ret) < 0) {
		cli_usage_error("invalid %s '%s' (%d to %d)", what, s, min,
				max);
		return -EINVAL;
	}
	return 0;
}

char *cli_mountpoint(const struct cli_options *o)
{
	return o->mountpoint ? g_strdup(o->mountpoint)
			     : basedirs_default_mountpoint();
}

/* Store what of `themes` the index at `db` lacks; logged on failure. */
static int store_synth(sqlite3 *db, const char *const *themes,
		       enum lookup_rules rules)
{
	_cleanup_(lookup_freep) struct lookup *l = NULL;
	struct synth *s = NULL;
	int r;

	r = lookup_new(db, rules, &l);
	if (r >= 0)
		r = synth_new(NULL, &s);
	if (r >= 0)
		r = synth_store(s, l, db, themes, -1);
	if (r < 0)
		log_warning_errno(r, "cannot store synthesized files: %m");
	synth_free(s);
	return r;
}

int cli_store_synth(sqlite3 *db, const char *theme, enum lookup_rules rules)
{
	_cleanup_(lookup_freep) struct lookup *l = NULL;
	g_auto(GStrv) themes = synth_session_themes(theme, rules);
	char exe[PATH_MAX];
	char *argv[] = { "iconfs", "store-synth",
			 (char *)sqlite3_db_filename(db, "main"), (char *)theme,
			 (char *)lookup_rules_name(rules), NULL };
	int status, r;
	pid_t pid;

	r = lookup_new(db, rules, &l);
	if (r >= 0 && synth_all_stored(l, themes))
		return 0;
	/* Built by a process of its own, waited for (this connection idle
	 * meanwhile): a large theme's files take 8 MB to build (Papirus),
	 * which a daemon's heap would keep resident between its long-lived
	 * allocations all session long (a first login's daemon at rest:
	 * 10.5 MiB of PSS, 6.9 with the build in a child). */
	if (spawn_self_exe(exe, sizeof(exe)) < 0 ||
	    spawn_helper(exe, argv, NULL, 0, false, &pid) < 0)
		return store_synth(db, (const char *const *)themes, rules);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

int cli_store_synth_main(const char *path, const char *theme,
			 const char *rules)
{
	_cleanup_(sqlite3_closep) sqlite3 *db = NULL;
	g_auto(GStrv) themes = NULL;
	int r = lookup_rules_from_name(rules);

	log_open_inherited();
	if (r < 0 || index_connect(path, 0, 5000, &db) < 0)
		return 1;
	themes = synth_session_themes(theme, (enum lookup_rules)r);
	r = store_synth(db, (const char *const *)themes, (enum lookup_rules)r);
	return r < 0 ? 1 : 0;
}
