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
 * where apps and runtimes are installed. */
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "log.h"

/* What flatpak sets when neither the runtime, the app nor an override
 * does (default_exports in flatpak-run.c), and what programs assume when
 * XDG_DATA_DIRS is unset (the XDG Base Directory specification). */
#define FLATPAK_DEFAULT_DATA_DIRS "/app/share:/usr/share"
#define XDG_DEFAULT_DATA_DIRS	  "/usr/local/share:/usr/share"
#define FLATPAK_GRANT		  "xdg-run/iconfs"
#define FLATPAK_GRANT_RO	  FLATPAK_GRANT ":ro"
#define DATA_DIRS		  "XDG_DATA_DIRS"
#define GROUP_CONTEXT		  "Context"
#define GROUP_ENVIRONMENT	  "Environment"
#define KEY_FILESYSTEMS		  "filesystems"
#define KEY_UNSET_ENV		  "unset-environment"

struct flatpak {
	char *mnt;	  /* the mount's path, the same inside the sandbox */
	char *user_dir;	  /* the user installation */
	char *system_dir; /* the default system installation */
	char *state_dir;  /* $XDG_STATE_HOME/iconfs/flatpak */
};

struct flatpak_app {
	char *id;
	bool user;	    /* in the user installation: no system overrides */
	GKeyFile *metadata; /* the app's */
	GKeyFile *runtime;  /* its runtime's; NULL when not installed */
};

static void flatpak_app_clear(struct flatpak_app *a)
{
	g_free(a->id);
	if (a->metadata)
		g_key_file_free(a->metadata);
	if (a->runtime)
		g_key_file_free(a->runtime);
	*a = (struct flatpak_app){ 0 };
}

static void flatpak_clear(struct flatpak *f)
{
	g_free(f->mnt);
	g_free(f->user_dir);
	g_free(f->system_dir);
	g_free(f->state_dir);
}

/* The first line of `s`, for a one-line message (without flatpak's
 * "error: "). */
static char *first_line(const char *s)
{
	const char *nl;

	while (*s == '\n')
		s++;
	if (g_str_has_prefix(s, "error: "))
		s += strlen("error: ");
	nl = strchr(s, '\n');
	return nl ? g_strndup(s, nl - s) : g_strdup(s);
}

/* Run `flatpak ARGS...`: its exit status (stdout in *ret_out, stderr in
 * *ret_err when not NULL), or -ENOENT with a log line when flatpak is not
 * installed. */
static int flatpak_run(char **ret_out, char **ret_err, ...)
{
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	/* its messages untranslated: they are matched and quoted */
	g_auto(GStrv) env =
		g_environ_setenv(g_get_environ(), "LC_ALL", "C.UTF-8", TRUE);
	g_autoptr(GError) err = NULL;
	g_autofree char *out = NULL, *errout = NULL;
	const char *a;
	va_list ap;
	int status;

	g_ptr_array_add(argv, (char *)"flatpak");
	va_start(ap, ret_err);
	while ((a = va_arg(ap, const char *)))
		g_ptr_array_add(argv, (char *)a);
	va_end(ap);
	g_ptr_array_add(argv, NULL);
	if (!g_spawn_sync(NULL, (char **)argv->pdata, env, G_SPAWN_SEARCH_PATH,
			  NULL, NULL, &out, &errout, &status, &err)) {
		if (g_error_matches(err, G_SPAWN_ERROR, G_SPAWN_ERROR_NOENT)) {
			log_error("flatpak is not installed: cannot run "
				  "'flatpak'");
			return -ENOENT;
		}
		log_error("cannot run 'flatpak': %s", err->message);
		return -EIO;
	}
	if (ret_out)
		*ret_out = g_steal_pointer(&out);
	if (ret_err)
		*ret_err = g_steal_pointer(&errout);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128;
}

/* The user installation as flatpak finds it ($FLATPAK_USER_DIR, else
 * $XDG_DATA_HOME/flatpak), the default system one ($FLATPAK_SYSTEM_DIR,
 * else /var/lib/flatpak). */
static void flatpak_init(struct flatpak *f)
{
	const char *e = getenv("FLATPAK_USER_DIR");
	const char *runtime = getenv("XDG_RUNTIME_DIR");
	g_autofree char *run = NULL;
	char real[PATH_MAX];

	f->user_dir = e && *e ? g_strdup(e)
			      : g_build_filename(g_get_user_data_dir(),
						 "flatpak", NULL);
	e = getenv("FLATPAK_SYSTEM_DIR");
	f->system_dir = g_strdup(e && *e ? e : "/var/lib/flatpak");
	f->state_dir = g_build_filename(g_get_user_state_dir(), "iconfs",
					"flatpak", NULL);
	/* the default mountpoint (basedirs_default_mountpoint), resolved as
	 * flatpak resolves xdg-run/ (realpath of the runtime directory) */
	run = runtime && *runtime == '/'
		      ? g_strdup(runtime)
		      : g_strdup_printf("/run/user/%u", (unsigned)getuid());
	f->mnt = g_build_filename(realpath(run, real) ? real : run, "iconfs",
				  NULL);
}

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

static GKeyFile *keyfile_load(const char *path, GError **err)
{
	GKeyFile *kf = g_key_file_new();

	if (!g_key_file_load_from_file(kf, path,
				       G_KEY_FILE_KEEP_COMMENTS |
					       G_KEY_FILE_KEEP_TRANSLATIONS,
				       err)) {
		g_key_file_free(kf);
		return NULL;
	}
	return kf;
}

/* The metadata of an installed ref ("app/ID" or "runtime/NAME/ARCH/BRANCH")
 * and where it is installed; -ENOENT when it is not. */
static int ref_metadata(const char *ref, GKeyFile **ret_kf, char **ret_location,
			char **ret_why)
{
	g_autofree char *out = NULL, *err = NULL, *meta = NULL;
	g_autoptr(GError) e = NULL;
	GKeyFile *kf;
	int r;

	r = flatpak_run(&out, &err, "info", "--show-location", ref, NULL);
	if (r < 0)
		return r;
	if (r != 0) {
		if (ret_why)
			*ret_why = first_line(err);
		return -ENOENT;
	}
	g_strstrip(out);
	meta = g_build_filename(out, "metadata", NULL);
	kf = keyfile_load(meta, &e);
	if (!kf) {
		if (ret_why)
			*ret_why = g_strdup_printf("cannot read '%s': %s", meta,
						   e->message);
		return -EIO;
	}
	*ret_kf = kf;
	if (ret_location)
		*ret_location = g_steal_pointer(&out);
	return 0;
}

static bool path_under(const char *path, const char *dir)
{
	char a[PATH_MAX], b[PATH_MAX];
	size_t n;

	if (!realpath(path, a) || !realpath(dir, b))
		return false;
	n = strlen(b);
	return strncmp(a, b, n) == 0 && (a[n] == '/' || a[n] == '\0');
}

/* An installed app: its metadata, its runtime's, its installation. Logs
 * one line and returns -ENOENT for an app that is not installed. */
static int app_load(const struct flatpak *f, const char *id,
		    struct flatpak_app *ret)
{
	g_autofree char *ref = g_strconcat("app/", id, NULL);
	g_autofree char *location = NULL, *why = NULL, *runtime = NULL;
	struct flatpak_app a = { 0 };
	int r;

	r = ref_metadata(ref, &a.metadata, &location, &why);
	if (r == -ENOENT && (!why || g_str_has_suffix(why, " not installed")))
		log_error("unknown Flatpak app '%s': not installed", id);
	else if (r < 0 && why)
		log_error("Flatpak app '%s': %s", id, why);
	if (r < 0)
		return r;
	a.id = g_strdup(id);
	a.user = path_under(location, f->user_dir);
	runtime = g_key_file_get_string(a.metadata, "Application", "runtime",
					NULL);
	if (runtime) {
		g_autofree char *rref = g_strconcat("runtime/", runtime, NULL);
		g_autofree char *rwhy = NULL;

		r = ref_metadata(rref, &a.runtime, NULL, &rwhy);
		if (r < 0 && r != -ENOENT && r != -EIO) {
			flatpak_app_clear(&a);
			return r;
		}
		if (r < 0)
			log_warning("the runtime '%s' of '%s' is not usable "
				    "(%s): its environment is not known",
				    runtime, id, rwhy ? rwhy : "not installed");
	}
	*ret = a;
	return 0;
}

static char *override_path(const char *base, const char *id)
{
	return g_build_filename(base, "overrides", id ? id : "global", NULL);
}

/* An override file; NULL when there is none (or it cannot be parsed: a
 * warning, and flatpak would refuse to run the app anyway). */
static GKeyFile *override_load(const char *base, const char *id)
{
	g_autofree char *path = override_path(base, id);
	g_autoptr(GError) err = NULL;
	GKeyFile *kf = keyfile_load(path, &err);

	if (!kf && !g_error_matches(err, G_FILE_ERROR, G_FILE_ERROR_NOENT))
		log_warning("cannot read the override '%s': %s", path,
			    err->message);
	return kf;
}

static bool strv_has(char **v, const char *s)
{
	return v && g_strv_contains((const char *const *)v, s);
}

enum data_dirs_setting {
	DATA_DIRS_NOT_SET, /* this layer leaves it alone */
	DATA_DIRS_UNSET,   /* it unsets it: the specification's default */
	DATA_DIRS_SET,
};

/* What one layer (metadata or override) does to XDG_DATA_DIRS: as flatpak
 * reads it, unset-environment wins over [Environment] and an empty value
 * unsets. */
static enum data_dirs_setting layer_data_dirs(GKeyFile *kf, char **ret)
{
	g_auto(GStrv) unset = NULL;
	g_autofree char *v = NULL;

	if (!kf)
		return DATA_DIRS_NOT_SET;
	unset = g_key_file_get_string_list(kf, GROUP_CONTEXT, KEY_UNSET_ENV,
					   NULL, NULL);
	if (strv_has(unset, DATA_DIRS))
		return DATA_DIRS_UNSET;
	v = g_key_file_get_string(kf, GROUP_ENVIRONMENT, DATA_DIRS, NULL);
	if (!v)
		return DATA_DIRS_NOT_SET;
	if (!*v)
		return DATA_DIRS_UNSET;
	*ret = g_steal_pointer(&v);
	return DATA_DIRS_SET;
}

/* The layers of an app's context, lowest first: runtime (only its
 * environment counts), app, system global and app overrides (system
 * installations only), the user's global override, and, with `with_user`,
 * the user's override of the app. Each may be NULL. */
#define N_LAYERS 6
static void app_layers(const struct flatpak *f, const struct flatpak_app *a,
		       bool with_user, GKeyFile *owned[N_LAYERS],
		       GKeyFile *layers[N_LAYERS])
{
	owned[0] = owned[1] = NULL;
	owned[2] = a->user ? NULL : override_load(f->system_dir, NULL);
	owned[3] = a->user ? NULL : override_load(f->system_dir, a->id);
	owned[4] = override_load(f->user_dir, NULL);
	owned[5] = with_user ? override_load(f->user_dir, a->id) : NULL;
	layers[0] = a->runtime;
	layers[1] = a->metadata;
	for (int i = 2; i < N_LAYERS; i++)
		layers[i] = owned[i];
}

static void layers_free(GKeyFile *owned[N_LAYERS])
{
	for (int i = 0; i < N_LAYERS; i++)
		if (owned[i])
			g_key_file_free(owned[i]);
}

/* The XDG_DATA_DIRS the app's programs get from these layers. */
static char *layers_data_dirs(GKeyFile *layers[N_LAYERS])
{
	for (int i = N_LAYERS - 1; i >= 0; i--) {
		char *v = NULL;

		switch (layer_data_dirs(layers[i], &v)) {
		case DATA_DIRS_SET:
			return v;
		case DATA_DIRS_UNSET:
			return g_strdup(XDG_DEFAULT_DATA_DIRS);
		case DATA_DIRS_NOT_SET:
			break;
		}
	}
	return g_strdup(FLATPAK_DEFAULT_DATA_DIRS);
}

/* A [Context] filesystems entry: the path without '!' and mode suffix, and
 * whether it grants or denies. */
static char *filesystem_path(const char *entry, bool *ret_grants)
{
	static const char *const modes[] = { ":ro", ":rw", ":create",
					     ":reset" };
	g_autofree char *p = NULL;
	size_t n;

	*ret_grants = *entry != '!';
	p = g_strdup(*entry == '!' ? entry + 1 : entry);
	for (size_t i = 0; i < ELEMENTSOF(modes); i++)
		if (g_str_has_suffix(p, modes[i])) {
			p[strlen(p) - strlen(modes[i])] = '\0';
			break;
		}
	n = strlen(p);
	while (n > 1 && p[n - 1] == '/')
		p[--n] = '\0';
	return g_steal_pointer(&p);
}

static bool entry_is_ours(const char *entry, bool *ret_grants)
{
	g_autofree char *p = filesystem_path(entry, ret_grants);

	return streq(p, FLATPAK_GRANT);
}

/* Whether these layers give the sandbox xdg-run/iconfs (flatpak merges
 * them in order; "!host:reset" drops what lower layers granted). */
static bool layers_grant(GKeyFile *layers[N_LAYERS])
{
	bool granted = false;

	/* the runtime's permissions are not inherited */
	for (int i = 1; i < N_LAYERS; i++) {
		g_auto(GStrv) fs = NULL;
		bool grants;

		if (!layers[i])
			continue;
		fs = g_key_file_get_string_list(layers[i], GROUP_CONTEXT,
						KEY_FILESYSTEMS, NULL, NULL);
		if (strv_has(fs, "!host:reset"))
			granted = false;
		for (char **e = fs; e && *e; e++)
			if (entry_is_ours(*e, &grants))
				granted = grants;
	}
	return granted;
}

static bool dir_eq(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	while (la > 1 && a[la - 1] == '/')
		la--;
	while (lb > 1 && b[lb - 1] == '/')
		lb--;
	return la == lb && strncmp(a, b, la) == 0;
}

static bool data_dirs_has(const char *dirs, const char *dir)
{
	g_auto(GStrv) v = g_strsplit(dirs, ":", -1);

	for (char **d = v; *d; d++)
		if (dir_eq(*d, dir))
			return true;
	return false;
}

/* `dirs` with `mnt` before the host's directories (at the end when it
 * names none), unless it holds it already. */
static char *data_dirs_insert(const char *dirs, const char *mnt)
{
	g_auto(GStrv) v = g_strsplit(dirs, ":", -1);
	g_autoptr(GPtrArray) out = g_ptr_array_new();
	bool done = false;

	if (data_dirs_has(dirs, mnt))
		return g_strdup(dirs);
	for (char **d = v; *d; d++) {
		if (!**d)
			continue;
		if (!done && (dir_eq(*d, "/run/host/user-share") ||
			      dir_eq(*d, "/run/host/share"))) {
			g_ptr_array_add(out, (char *)mnt);
			done = true;
		}
		g_ptr_array_add(out, *d);
	}
	if (!done)
		g_ptr_array_add(out, (char *)mnt);
	g_ptr_array_add(out, NULL);
	return g_strjoinv(":", (char **)out->pdata);
}

/* `dirs` without `mnt`. */
static char *data_dirs_remove(const char *dirs, const char *mnt)
{
	g_auto(GStrv) v = g_strsplit(dirs, ":", -1);
	g_autoptr(GPtrArray) out = g_ptr_array_new();

	for (char **d = v; *d; d++)
		if (!dir_eq(*d, mnt))
			g_ptr_array_add(out, *d);
	g_ptr_array_add(out, NULL);
	return g_strjoinv(":", (char **)out->pdata);
}

/* A string-list key without `drop` (removed when nothing is left). */
static void list_remove(GKeyFile *kf, const char *group, const char *key,
			const char *drop)
{
	g_auto(GStrv) v =
		g_key_file_get_string_list(kf, group, key, NULL, NULL);
	g_autoptr(GPtrArray) out = g_ptr_array_new();

	if (!strv_has(v, drop))
		return;
	for (char **e = v; *e; e++)
		if (!streq(*e, drop))
			g_ptr_array_add(out, *e);
	if (out->len == 0) {
		(void)g_key_file_remove_key(kf, group, key, NULL);
		return;
	}
	g_key_file_set_string_list(kf, group, key,
				   (const char *const *)out->pdata, out->len);
}

static void group_drop_if_empty(GKeyFile *kf, const char *group)
{
	g_auto(GStrv) keys = g_key_file_get_keys(kf, group, NULL, NULL);

	if (keys && !keys[0])
		(void)g_key_file_remove_group(kf, group, NULL);
}

/* The user's override of an app (`data`, NULL when there is none) with
 * the grant and the mount in XDG_DATA_DIRS (`inherited`: what the app has
 * without this file). Nothing else of it changes. */
static int override_apply(const struct flatpak *f, const char *path,
			  const char *data, const char *inherited, char **ret)
{
	g_autoptr(GKeyFile) kf = g_key_file_new();
	g_autoptr(GError) err = NULL;
	g_auto(GStrv) fs = NULL, unset = NULL;
	g_autoptr(GPtrArray) keep = g_ptr_array_new();
	g_autofree char *base = NULL, *dirs = NULL;
	bool granted = false, changed = false;

	if (data &&
	    !g_key_file_load_from_data(kf, data, -1,
				       G_KEY_FILE_KEEP_COMMENTS |
					       G_KEY_FILE_KEEP_TRANSLATIONS,
				       &err)) {
		log_error("cannot parse the override '%s': %s", path,
			  err->message);
		return -EINVAL;
	}

	/* the grant: a "!xdg-run/iconfs" of the user's gives way */
	fs = g_key_file_get_string_list(kf, GROUP_CONTEXT, KEY_FILESYSTEMS,
					NULL, NULL);
	for (char **e = fs; e && *e; e++) {
		bool grants;

		if (entry_is_ours(*e, &grants) && !grants) {
			changed = true;
			continue;
		}
		if (entry_is_ours(*e, &grants))
			granted = true;
		g_ptr_array_add(keep, *e);
	}
	if (!granted) {
		g_ptr_array_add(keep, (char *)FLATPAK_GRANT_RO);
		changed = true;
	}
	if (changed)
		g_key_file_set_string_list(kf, GROUP_CONTEXT, KEY_FILESYSTEMS,
					   (const char *const *)keep->pdata,
					   keep->len);

	/* XDG_DATA_DIRS: the file's own value, else the inherited one */
	unset = g_key_file_get_string_list(kf, GROUP_CONTEXT, KEY_UNSET_ENV,
					   NULL, NULL);
	if (strv_has(unset, DATA_DIRS)) {
		list_remove(kf, GROUP_CONTEXT, KEY_UNSET_ENV, DATA_DIRS);
		base = g_strdup(XDG_DEFAULT_DATA_DIRS);
	} else {
		base = g_key_file_get_string(kf, GROUP_ENVIRONMENT, DATA_DIRS,
					     NULL);
		if (!base)
			base = g_strdup(inherited);
		else if (!*base) {
			g_free(base);
			base = g_strdup(XDG_DEFAULT_DATA_DIRS);
		}
	}
	dirs = data_dirs_insert(base, f->mnt);
	{
		g_autofree char *have = g_key_file_get_string(
			kf, GROUP_ENVIRONMENT, DATA_DIRS, NULL);

		if (!have || !streq(have, dirs))
			g_key_file_set_string(kf, GROUP_ENVIRONMENT, DATA_DIRS,
					      dirs);
	}
	*ret = g_key_file_to_data(kf, NULL, NULL);
	return 0;
}

/* The user's override `current` (changed since `enable`) without what
 * iconfs added to `before` (NULL: there was no file): the grant unless it
 * was there, the mount in XDG_DATA_DIRS, a key or group iconfs made.
 * `inherited` is what the app has without the file (NULL if unknown). */
static int override_strip(const struct flatpak *f, const char *current,
			  const char *before, const char *inherited, char **ret,
			  bool *ret_empty)
{
	g_autoptr(GKeyFile) kf = g_key_file_new();
	g_autoptr(GKeyFile) old = g_key_file_new();
	g_auto(GStrv) fs = NULL, old_fs = NULL, old_unset = NULL;
	g_autoptr(GPtrArray) keep = g_ptr_array_new();
	g_autofree char *dirs = NULL, *old_dirs = NULL;
	g_auto(GStrv) groups = NULL;
	bool changed = false;

	if (!g_key_file_load_from_data(kf, current, -1,
				       G_KEY_FILE_KEEP_COMMENTS |
					       G_KEY_FILE_KEEP_TRANSLATIONS,
				       NULL) ||
	    (before && !g_key_file_load_from_data(old, before, -1, 0, NULL)))
		return -EINVAL;

	/* the grant: back to what `before` had of it */
	fs = g_key_file_get_string_list(kf, GROUP_CONTEXT, KEY_FILESYSTEMS,
					NULL, NULL);
	old_fs = g_key_file_get_string_list(old, GROUP_CONTEXT, KEY_FILESYSTEMS,
					    NULL, NULL);
	for (char **e = fs; e && *e; e++) {
		bool grants;

		if (entry_is_ours(*e, &grants) && !strv_has(old_fs, *e)) {
			changed = true;
			continue;
		}
		g_ptr_array_add(keep, *e);
	}
	for (char **e = old_fs; e && *e; e++) {
		bool grants;

		if (entry_is_ours(*e, &grants) && !grants &&
		    !strv_has(fs, *e)) {
			g_ptr_array_add(keep, *e);
			changed = true;
		}
	}
	if (changed && keep->len == 0 && !old_fs)
		(void)g_key_file_remove_key(kf, GROUP_CONTEXT, KEY_FILESYSTEMS,
					    NULL);
	else if (changed)
		g_key_file_set_string_list(kf, GROUP_CONTEXT, KEY_FILESYSTEMS,
					   (const char *const *)keep->pdata,
					   keep->len);

	/* XDG_DATA_DIRS: without the mount; gone if iconfs made it and it
	 * is what the app would have anyway (or the file unset it) */
	old_unset = g_key_file_get_string_list(old, GROUP_CONTEXT,
					       KEY_UNSET_ENV, NULL, NULL);
	dirs = g_key_file_get_string(kf, GROUP_ENVIRONMENT, DATA_DIRS, NULL);
	old_dirs =
		g_key_file_get_string(old, GROUP_ENVIRONMENT, DATA_DIRS, NULL);
	if (dirs && data_dirs_has(dirs, f->mnt) &&
	    !(old_dirs && data_dirs_has(old_dirs, f->mnt))) {
		g_autofree char *without = data_dirs_remove(dirs, f->mnt);

		if (!old_dirs && (!inherited || streq(without, inherited) ||
				  strv_has(old_unset, DATA_DIRS)))
			(void)g_key_file_remove_key(kf, GROUP_ENVIRONMENT,
						    DATA_DIRS, NULL);
		else
			g_key_file_set_string(kf, GROUP_ENVIRONMENT, DATA_DIRS,
					      without);
	}
	if (strv_has(old_unset, DATA_DIRS)) {
		g_auto(GStrv) unset = g_key_file_get_string_list(
			kf, GROUP_CONTEXT, KEY_UNSET_ENV, NULL, NULL);
		g_autoptr(GPtrArray) v = g_ptr_array_new();

		for (char **e = unset; e && *e; e++)
			g_ptr_array_add(v, *e);
		if (!strv_has(unset, DATA_DIRS))
			g_ptr_array_add(v, (char *)DATA_DIRS);
		g_key_file_set_string_list(kf, GROUP_CONTEXT, KEY_UNSET_ENV,
					   (const char *const *)v->pdata,
					   v->len);
	}
	if (!g_key_file_has_group(old, GROUP_CONTEXT))
		group_drop_if_empty(kf, GROUP_CONTEXT);
	if (!g_key_file_has_group(old, GROUP_ENVIRONMENT))
		group_drop_if_empty(kf, GROUP_ENVIRONMENT);
	groups = g_key_file_get_groups(kf, NULL);
	*ret_empty = !before && !groups[0];
	*ret = g_key_file_to_data(kf, NULL, NULL);
	return 0;
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
	g_autofree char *path = override_path(f->user_dir, id);
	g_autofree char *current = NULL, *inherited = NULL, *data = NULL;
	GKeyFile *owned[N_LAYERS], *layers[N_LAYERS];
	const char *from;
	int r;

	r = app_load(f, id, &a);
	if (r < 0)
		return r;
	app_layers(f, &a, false, owned, layers);
	inherited = layers_data_dirs(layers);
	layers_free(owned);

	r = app_state_load(f, id, &s);
	if (r < 0)
		return r;
	r = file_read(path, &current);
	if (r < 0 && r != -ENOENT)
		return r;
	/* as iconfs left it: made again from what was there before (the
	 * runtime may have changed its XDG_DATA_DIRS since) */
	from = s.exists && str_eq0(current, s.written) ? s.before : current;
	r = override_apply(f, path, from, inherited, &data);
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
	g_autofree char *path = override_path(f->user_dir, id);
	g_autofree char *current = NULL, *data = NULL, *inherited = NULL;
	bool empty = false;
	int r;

	r = app_state_load(f, id, &s);
	if (r < 0)
		return r;
	if (!s.exists) {
		/* an app iconfs never touched: say whether it exists */
		r = app_load(f, id, &a);
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
		if (app_load(f, id, &a) >= 0) {
			GKeyFile *owned[N_LAYERS], *layers[N_LAYERS];

			app_layers(f, &a, false, owned, layers);
			inherited = layers_data_dirs(layers);
			layers_free(owned);
		}
		r = override_strip(f, current, s.before, inherited, &data,
				   &empty);
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
	GKeyFile *owned[N_LAYERS], *layers[N_LAYERS];
	g_autofree char *dirs = NULL;
	bool granted, holds;
	int r;

	r = app_load(f, id, &a);
	if (r < 0)
		return r;
	app_layers(f, &a, true, owned, layers);
	granted = layers_grant(layers);
	dirs = layers_data_dirs(layers);
	layers_free(owned);
	holds = data_dirs_has(dirs, f->mnt);
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
		g_autofree char *why = first_line(err);

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
