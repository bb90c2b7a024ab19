/* `iconfs flatpak enable|disable|status [APP...|--all]`: Flatpak apps see
 * the mount.
 *
 * A Flatpak sandbox gets a fresh $XDG_RUNTIME_DIR and the XDG_DATA_DIRS of
 * its runtime, so an app sees neither the mount nor its path. A user
 * override (overrides/APP of the user installation: the keyfile that
 * `flatpak override --user` writes) grants xdg-run/iconfs read-only, which
 * flatpak binds at the same path inside, and sets the app's XDG_DATA_DIRS:
 * the value the app has without it (flatpak's order, highest first: the
 * user's override of the app, the user's global override, for a system
 * installation the system's overrides, the app's metadata, its runtime's,
 * flatpak's built-in value) with the mount inserted before the host's
 * directories (/run/host/user-share, /run/host/share).
 *
 * The override is edited as a keyfile: every other key, group and comment
 * of it stays. What was there before `enable` is kept in iconfs's own state
 * ($XDG_STATE_HOME/iconfs/flatpak/: APP.before, the file's bytes, or
 * APP.none when there was no file; APP.written, what iconfs wrote), never
 * in flatpak's file, so that `disable` puts back the very bytes. An
 * override changed since `enable` is only stripped of what iconfs added.
 * Flatpak is asked through its command (`flatpak info`, `flatpak list`)
 * where apps and runtimes are installed. Reading Flatpak (installations,
 * metadata, overrides, an app's context) is flatpak-context.c; editing the
 * override, flatpak-override.c; this file is the command: iconfs's state
 * for each app, enable, disable, status and the lists of apps. */
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "flatpak-context.h"
#include "flatpak-override.h"
#include "log.h"

/* Flatpak's application IDs: letters, digits, '_', '-' and '.', and no
 * path tricks. */
static bool app_id_valid(const char *id)
{
	if (!*id || *id == '.' || strlen(id) > 255)
		return false;
	for (const char *p = id; *p; p++)
		if (!g_ascii_isalnum(*p) && !strchr("._-", *p))
			return false;
	return true;
}

/* A whole file; -ENOENT when there is none. */
static int file_read(const char *path, char **ret)
{
	g_autoptr(GError) err = NULL;

	if (g_file_get_contents(path, ret, NULL, &err))
		return 0;
	if (g_error_matches(err, G_FILE_ERROR, G_FILE_ERROR_NOENT))
		return -ENOENT;
	log_error("cannot read '%s': %s", path, err->message);
	return -EIO;
}

/* Write a file whole (a temporary file renamed over it). */
static int file_write(const char *path, const char *data)
{
	g_autoptr(GError) err = NULL;
	g_autofree char *dir = g_path_get_dirname(path);

	if (g_mkdir_with_parents(dir, 0755) < 0) {
		int r = -errno;

		return log_error_errno(r, "cannot make '%s': %m", dir);
	}
	if (!g_file_set_contents_full(path, data, -1,
				      G_FILE_SET_CONTENTS_CONSISTENT, 0644,
				      &err)) {
		log_error("cannot write '%s': %s", path, err->message);
		return -EIO;
	}
	return 0;
}

static int file_remove(const char *path)
{
	if (unlink(path) < 0 && errno != ENOENT) {
		int r = -errno;

		return log_error_errno(r, "cannot remove '%s': %m", path);
	}
	return 0;
}

/* iconfs's state for one app: APP.before/APP.none and APP.written. */
struct app_state {
	char *before_path, *none_path, *written_path;
	bool exists;   /* `enable` changed the override */
	char *before;  /* NULL: there was no override */
	char *written; /* NULL if lost */
};

static void app_state_clear(struct app_state *s)
{
	g_free(s->before_path);
	g_free(s->none_path);
	g_free(s->written_path);
	g_free(s->before);
	g_free(s->written);
}

static int app_state_load(const struct flatpak *f, const char *id,
			  struct app_state *s)
{
	g_autofree char *base = g_build_filename(f->state_dir, id, NULL);
	int r;

	*s = (struct app_state){
		.before_path = g_strconcat(base, ".before", NULL),
		.none_path = g_strconcat(base, ".none", NULL),
		.written_path = g_strconcat(base, ".written", NULL),
	};
	r = file_read(s->before_path, &s->before);
	if (r == -ENOENT)
		s->exists = access(s->none_path, F_OK) == 0;
	else if (r < 0)
		return r;
	else
		s->exists = true;
	r = file_read(s->written_path, &s->written);
	return r == -ENOENT ? 0 : r;
}

static int app_state_remove(const struct app_state *s)
{
	int r = file_remove(s->written_path);

	if (r >= 0)
		r = file_remove(s->before_path);
	if (r >= 0)
		r = file_remove(s->none_path);
	return r;
}

static bool str_eq0(const char *a, const char *b)
{
	return a && b && streq(a, b);
}

static int app_enable(const struct flatpak *f, const char *id)
{
	_cleanup_(flatpak_app_clear) struct flatpak_app a = { 0 };
	_cleanup_(app_state_clear) struct app_state s = { 0 };
	g_autofree char *path = flatpak_override_path(f->user_dir, id);
	g_autofree char *current = NULL, *inherited = NULL, *data = NULL;
	const char *from;
	int r;

	r = flatpak_app_load(f, id, &a);
	if (r < 0)
		return r;
	inherited = flatpak_app_context(f, &a, false, NULL);

	r = app_state_load(f, id, &s);
	if (r < 0)
		return r;
	r = file_read(path, &current);
	if (r < 0 && r != -ENOENT)
		return r;
	/* as iconfs left it: made again from what was there before (the
	 * runtime may have changed its XDG_DATA_DIRS since) */
	from = s.exists && str_eq0(current, s.written) ? s.before : current;
	r = flatpak_override_apply(f, path, from, inherited, &data);
	if (r < 0)
		return r;
	if (str_eq0(data, current)) {
		printf("%s: %s\n", id,
		       s.exists ? "already enabled"
				: "already sees the mount (its override "
				  "grants it)");
		if (s.exists && !str_eq0(s.written, current))
			return file_write(s.written_path, current);
		return 0;
	}
	if (!s.exists) {
		r = g_mkdir_with_parents(f->state_dir, 0700);
		if (r < 0) {
			r = -errno;
			return log_error_errno(r, "cannot make '%s': %m",
					       f->state_dir);
		}
		r = current ? file_write(s.before_path, current)
			    : file_write(s.none_path, "");
		if (r < 0)
			return r;
	}
	r = file_write(path, data);
	if (r >= 0)
		r = file_write(s.written_path, data);
	if (r < 0)
		return r;
	printf("%s: enabled (%s)\n", id, path);
	return 0;
}

static int app_disable(const struct flatpak *f, const char *id)
{
	_cleanup_(app_state_clear) struct app_state s = { 0 };
	_cleanup_(flatpak_app_clear) struct flatpak_app a = { 0 };
	g_autofree char *path = flatpak_override_path(f->user_dir, id);
	g_autofree char *current = NULL, *data = NULL, *inherited = NULL;
	bool empty = false;
	int r;

	r = app_state_load(f, id, &s);
	if (r < 0)
		return r;
	if (!s.exists) {
		/* an app iconfs never touched: say whether it exists */
		r = flatpak_app_load(f, id, &a);
		if (r < 0)
			return r;
		printf("%s: not enabled by iconfs; nothing to undo\n", id);
		return 0;
	}
	r = file_read(path, &current);
	if (r < 0 && r != -ENOENT)
		return r;
	if (str_eq0(current, s.written)) {
		/* as iconfs left it: back to the very bytes */
		r = s.before ? file_write(path, s.before) : file_remove(path);
	} else if (!current) {
		log_warning("%s: the override '%s' was removed since 'iconfs "
			    "flatpak enable'; nothing to restore",
			    id, path);
	} else {
		if (flatpak_app_load(f, id, &a) >= 0)
			inherited = flatpak_app_context(f, &a, false, NULL);
		r = flatpak_override_strip(f, current, s.before, inherited,
					   &data, &empty);
		if (r < 0) {
			log_error(
				"%s: cannot parse the override '%s', changed "
				"since 'iconfs flatpak enable'; left as it is",
				id, path);
			return r;
		}
		log_warning("%s: the override '%s' changed since 'iconfs "
			    "flatpak enable': only what iconfs added is taken "
			    "out",
			    id, path);
		r = empty ? file_remove(path) : file_write(path, data);
	}
	if (r >= 0)
		r = app_state_remove(&s);
	if (r < 0)
		return r;
	printf("%s: disabled\n", id);
	return 0;
}

static int app_status(const struct flatpak *f, const char *id)
{
	_cleanup_(flatpak_app_clear) struct flatpak_app a = { 0 };
	_cleanup_(app_state_clear) struct app_state s = { 0 };
	g_autofree char *dirs = NULL;
	bool granted, holds;
	int r;

	r = flatpak_app_load(f, id, &a);
	if (r < 0)
		return r;
	dirs = flatpak_app_context(f, &a, true, &granted);
	holds = flatpak_data_dirs_has(dirs, f->mnt);
	(void)app_state_load(f, id, &s);
	if (granted && holds)
		printf("%s: sees the mount%s\n", id,
		       s.exists ? " (enabled by iconfs)" : "");
	else
		printf("%s: does not see the mount: %s%s%s%s\n", id,
		       granted ? "" : "no access to " FLATPAK_GRANT,
		       !granted && !holds ? ", " : "",
		       holds ? "" : "XDG_DATA_DIRS lacks ",
		       holds ? "" : f->mnt);
	return 0;
}

/* The installed apps, user and system, each once. */
static int installed_apps(GPtrArray **ret)
{
	g_autofree char *out = NULL, *err = NULL;
	g_auto(GStrv) lines = NULL;
	GPtrArray *apps;
	int r;

	r = flatpak_run(&out, &err, "list", "--app", "--columns=application",
			NULL);
	if (r < 0)
		return r;
	if (r != 0) {
		g_autofree char *why = flatpak_first_line(err);

		log_error("cannot list the Flatpak apps: %s", why);
		return -EIO;
	}
	apps = g_ptr_array_new_with_free_func(g_free);
	lines = g_strsplit(out, "\n", -1);
	for (char **l = lines; *l; l++) {
		g_strstrip(*l);
		if (**l && !g_ptr_array_find_with_equal_func(apps, *l,
							     g_str_equal, NULL))
			g_ptr_array_add(apps, g_strdup(*l));
	}
	*ret = apps;
	return 0;
}

/* The apps iconfs enabled (its state files), sorted. */
static GPtrArray *enabled_apps(const struct flatpak *f)
{
	GPtrArray *apps = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GDir) d = g_dir_open(f->state_dir, 0, NULL);
	const char *e;

	while (d && (e = g_dir_read_name(d))) {
		const char *dot = strrchr(e, '.');

		if (dot && (streq(dot, ".before") || streq(dot, ".none")))
			g_ptr_array_add(apps, g_strndup(e, dot - e));
	}
	g_ptr_array_sort(apps, (GCompareFunc)g_strcmp0);
	return apps;
}

/* Something is mounted at `path` (another device than its parent's). */
static bool is_mounted(const char *path)
{
	g_autofree char *parent = g_path_get_dirname(path);
	struct stat a, b;

	return stat(path, &a) == 0 && stat(parent, &b) == 0 &&
	       a.st_dev != b.st_dev;
}

int cli_flatpak(struct cli_options *o)
{
	static const char *const verbs[] = { "enable", "disable", "status" };
	int (*const run[])(const struct flatpak *,
			   const char *) = { app_enable, app_disable,
					     app_status };
	_cleanup_(flatpak_clear) struct flatpak f = { 0 };
	g_autoptr(GPtrArray) apps = NULL;
	const char *verb = o->args[0];
	size_t v;
	int failed = 0, r;

	for (v = 0; v < ELEMENTSOF(verbs); v++)
		if (streq(verb, verbs[v]))
			break;
	if (v == ELEMENTSOF(verbs)) {
		cli_usage_error("unknown flatpak command '%s' (enable, disable "
				"or status)",
				verb);
		return 2;
	}
	if (o->all_apps && o->n_args > 1) {
		cli_usage_error("--all and app IDs exclude each other");
		return 2;
	}
	if (v != 2 && !o->all_apps && o->n_args == 1) {
		cli_usage_error("'iconfs flatpak %s' takes app IDs or --all",
				verb);
		return 2;
	}
	for (int i = 1; i < o->n_args; i++)
		if (!app_id_valid(o->args[i])) {
			cli_usage_error("invalid Flatpak app ID '%s'",
					o->args[i]);
			return 2;
		}
	flatpak_init(&f);
	/* flatpak is needed even to undo: it says which apps exist */
	r = flatpak_run(NULL, NULL, "--version", NULL);
	if (r < 0)
		return 1;

	if (o->n_args > 1) {
		apps = g_ptr_array_new_with_free_func(g_free);
		for (int i = 1; i < o->n_args; i++)
			g_ptr_array_add(apps, g_strdup(o->args[i]));
	} else if (v == 1) {
		apps = enabled_apps(&f);
		if (apps->len == 0)
			printf("no app is enabled by iconfs\n");
	} else {
		if (installed_apps(&apps) < 0)
			return 1;
		if (apps->len == 0)
			printf("no Flatpak app is installed\n");
	}
	for (guint i = 0; i < apps->len; i++)
		if (run[v](&f, apps->pdata[i]) < 0)
			failed++;
	if (failed == 0 && v == 0 && apps->len > 0 && !is_mounted(f.mnt))
		log_warning("nothing is mounted at '%s' yet: an app sees the "
			    "mount if it is there when the app starts",
			    f.mnt);
	return failed ? 1 : 0;
}
