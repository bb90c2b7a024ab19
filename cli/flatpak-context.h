/* What Flatpak gives an app, read the way flatpak reads it: where the user
 * and the default system installations are, the `flatpak` command (which
 * says where a ref is installed), an app's and its runtime's metadata, the
 * overrides, and the layers of an app's context they make, with the
 * XDG_DATA_DIRS and the xdg-run/iconfs grant those layers give. Only reads:
 * editing the user's override is flatpak-override.h. struct flatpak and
 * struct flatpak_app own their strings and keyfiles (flatpak_clear,
 * flatpak_app_clear); a returned string is the caller's to g_free. */
#pragma once

#include <glib.h>
#include <stdbool.h>

/* What flatpak sets when neither the runtime, the app nor an override
 * does (default_exports in flatpak-run.c), and what programs assume when
 * XDG_DATA_DIRS is unset (the XDG Base Directory specification). */
#define FLATPAK_DEFAULT_DATA_DIRS     "/app/share:/usr/share"
#define FLATPAK_XDG_DEFAULT_DATA_DIRS "/usr/local/share:/usr/share"
#define FLATPAK_GRANT		      "xdg-run/iconfs"
#define FLATPAK_GRANT_RO	      FLATPAK_GRANT ":ro"
#define FLATPAK_ENV_DATA_DIRS	      "XDG_DATA_DIRS"
#define FLATPAK_GROUP_CONTEXT	      "Context"
#define FLATPAK_GROUP_ENVIRONMENT     "Environment"
#define FLATPAK_KEY_FILESYSTEMS	      "filesystems"
#define FLATPAK_KEY_UNSET_ENV	      "unset-environment"

/* Where things are: the mount, the two installations, iconfs's own state
 * (flatpak_init). */
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

/* The user installation as flatpak finds it ($FLATPAK_USER_DIR, else
 * $XDG_DATA_HOME/flatpak), the default system one ($FLATPAK_SYSTEM_DIR,
 * else /var/lib/flatpak). */
void flatpak_init(struct flatpak *f);
void flatpak_clear(struct flatpak *f);

/* Run `flatpak ARGS...`: its exit status (stdout in *ret_out, stderr in
 * *ret_err when not NULL), or -ENOENT with a log line when flatpak is not
 * installed. */
int flatpak_run(char **ret_out, char **ret_err, ...) __attribute__((sentinel));

/* The first line of `s`, for a one-line message (without flatpak's
 * "error: "). */
char *flatpak_first_line(const char *s);

/* An installed app: its metadata, its runtime's, its installation. Logs
 * one line and returns -ENOENT for an app that is not installed. */
int flatpak_app_load(const struct flatpak *f, const char *id,
		     struct flatpak_app *ret);
void flatpak_app_clear(struct flatpak_app *a);

/* The override file of app `id` (NULL: the global one) in the
 * installation `base`. */
char *flatpak_override_path(const char *base, const char *id);

bool flatpak_strv_has(char **v, const char *s);

/* What an app's context comes to, merged from its layers as flatpak
 * does (lowest first: the runtime, of which only the environment counts;
 * the app; the system's global and app overrides, for system
 * installations; the user's global override; with `with_user`, the user's
 * override of the app): the XDG_DATA_DIRS its programs get (g_free) and,
 * where ret_granted, whether the sandbox is given xdg-run/iconfs
 * ("!host:reset" drops what lower layers granted). */
char *flatpak_app_context(const struct flatpak *f, const struct flatpak_app *a,
			  bool with_user, bool *ret_granted);

/* Whether a [Context] filesystems entry is about xdg-run/iconfs, whatever
 * its mode; *ret_grants: it grants it rather than denies it. */
bool flatpak_filesystem_is_ours(const char *entry, bool *ret_grants);
