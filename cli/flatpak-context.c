/* Reading Flatpak for `iconfs flatpak` (flatpak-context.h): the
 * installations, the `flatpak` command, refs' metadata, the overrides, and
 * what the layers of an app's context make of XDG_DATA_DIRS and of the
 * xdg-run/iconfs grant, each read as flatpak reads it. */
#include <errno.h>
#include <glib.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "flatpak-context.h"
#include "log.h"
#include "macro.h"

void flatpak_app_clear(struct flatpak_app *a)
{
	g_free(a->id);
	if (a->metadata)
		g_key_file_free(a->metadata);
	if (a->runtime)
		g_key_file_free(a->runtime);
	*a = (struct flatpak_app){ 0 };
}

void flatpak_clear(struct flatpak *f)
{
	g_free(f->mnt);
	g_free(f->user_dir);
	g_free(f->system_dir);
	g_free(f->state_dir);
}

char *flatpak_first_line(const char *s)
{
	const char *nl;

	while (*s == '\n')
		s++;
	if (g_str_has_prefix(s, "error: "))
		s += strlen("error: ");
	nl = strchr(s, '\n');
	return nl ? g_strndup(s, nl - s) : g_strdup(s);
}

int flatpak_run(char **ret_out, char **ret_err, ...)
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

void flatpak_init(struct flatpak *f)
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
			*ret_why = flatpak_first_line(err);
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

int flatpak_app_load(const struct flatpak *f, const char *id,
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

char *flatpak_override_path(const char *base, const char *id)
{
	return g_build_filename(base, "overrides", id ? id : "global", NULL);
}

/* An override file; NULL when there is none (or it cannot be parsed: a
 * warning, and flatpak would refuse to run the app anyway). */
static GKeyFile *override_load(const char *base, const char *id)
{
	g_autofree char *path = flatpak_override_path(base, id);
	g_autoptr(GError) err = NULL;
	GKeyFile *kf = keyfile_load(path, &err);

	if (!kf && !g_error_matches(err, G_FILE_ERROR, G_FILE_ERROR_NOENT))
		log_warning("cannot read the override '%s': %s", path,
			    err->message);
	return kf;
}

bool flatpak_strv_has(char **v, const char *s)
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
	unset = g_key_file_get_string_list(kf, FLATPAK_GROUP_CONTEXT,
					   FLATPAK_KEY_UNSET_ENV, NULL, NULL);
	if (flatpak_strv_has(unset, FLATPAK_ENV_DATA_DIRS))
		return DATA_DIRS_UNSET;
	v = g_key_file_get_string(kf, FLATPAK_GROUP_ENVIRONMENT,
				  FLATPAK_ENV_DATA_DIRS, NULL);
	if (!v)
		return DATA_DIRS_NOT_SET;
	if (!*v)
		return DATA_DIRS_UNSET;
	*ret = g_steal_pointer(&v);
	return DATA_DIRS_SET;
}

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

static char *layers_data_dirs(GKeyFile *layers[N_LAYERS])
{
	for (int i = N_LAYERS - 1; i >= 0; i--) {
		char *v = NULL;

		switch (layer_data_dirs(layers[i], &v)) {
		case DATA_DIRS_SET:
			return v;
		case DATA_DIRS_UNSET:
			return g_strdup(FLATPAK_XDG_DEFAULT_DATA_DIRS);
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

bool flatpak_filesystem_is_ours(const char *entry, bool *ret_grants)
{
	g_autofree char *p = filesystem_path(entry, ret_grants);

	return streq(p, FLATPAK_GRANT);
}

static bool layers_grant(GKeyFile *layers[N_LAYERS])
{
	bool granted = false;

	/* the runtime's permissions are not inherited */
	for (int i = 1; i < N_LAYERS; i++) {
		g_auto(GStrv) fs = NULL;
		bool grants;

		if (!layers[i])
			continue;
		fs = g_key_file_get_string_list(
			layers[i], FLATPAK_GROUP_CONTEXT,
			FLATPAK_KEY_FILESYSTEMS, NULL, NULL);
		if (flatpak_strv_has(fs, "!host:reset"))
			granted = false;
		for (char **e = fs; e && *e; e++)
			if (flatpak_filesystem_is_ours(*e, &grants))
				granted = grants;
	}
	return granted;
}

char *flatpak_app_context(const struct flatpak *f, const struct flatpak_app *a,
			  bool with_user, bool *ret_granted)
{
	GKeyFile *owned[N_LAYERS], *layers[N_LAYERS];
	char *dirs;

	app_layers(f, a, with_user, owned, layers);
	dirs = layers_data_dirs(layers);
	if (ret_granted)
		*ret_granted = layers_grant(layers);
	layers_free(owned);
	return dirs;
}
