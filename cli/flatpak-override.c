/* Editing the user's override of an app (flatpak-override.h): the keyfile
 * is loaded with its comments and translations and written back whole,
 * with only the grant, XDG_DATA_DIRS and unset-environment touched. */
#include <errno.h>
#include <glib.h>
#include <stdbool.h>
#include <string.h>

#include "flatpak-context.h"
#include "flatpak-override.h"
#include "log.h"
#include "macro.h"

static bool dir_eq(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	while (la > 1 && a[la - 1] == '/')
		la--;
	while (lb > 1 && b[lb - 1] == '/')
		lb--;
	return la == lb && strncmp(a, b, la) == 0;
}

bool flatpak_data_dirs_has(const char *dirs, const char *dir)
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

	if (flatpak_data_dirs_has(dirs, mnt))
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

	if (!flatpak_strv_has(v, drop))
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

int flatpak_override_apply(const struct flatpak *f, const char *path,
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
	fs = g_key_file_get_string_list(kf, FLATPAK_GROUP_CONTEXT,
					FLATPAK_KEY_FILESYSTEMS, NULL, NULL);
	for (char **e = fs; e && *e; e++) {
		bool grants;

		if (flatpak_filesystem_is_ours(*e, &grants) && !grants) {
			changed = true;
			continue;
		}
		if (flatpak_filesystem_is_ours(*e, &grants))
			granted = true;
		g_ptr_array_add(keep, *e);
	}
	if (!granted) {
		g_ptr_array_add(keep, (char *)FLATPAK_GRANT_RO);
		changed = true;
	}
	if (changed)
		g_key_file_set_string_list(
			kf, FLATPAK_GROUP_CONTEXT, FLATPAK_KEY_FILESYSTEMS,
			(const char *const *)keep->pdata, keep->len);

	/* XDG_DATA_DIRS: the file's own value, else the inherited one */
	unset = g_key_file_get_string_list(kf, FLATPAK_GROUP_CONTEXT,
					   FLATPAK_KEY_UNSET_ENV, NULL, NULL);
	if (flatpak_strv_has(unset, FLATPAK_ENV_DATA_DIRS)) {
		list_remove(kf, FLATPAK_GROUP_CONTEXT, FLATPAK_KEY_UNSET_ENV,
			    FLATPAK_ENV_DATA_DIRS);
		base = g_strdup(FLATPAK_XDG_DEFAULT_DATA_DIRS);
	} else {
		base = g_key_file_get_string(kf, FLATPAK_GROUP_ENVIRONMENT,
					     FLATPAK_ENV_DATA_DIRS, NULL);
		if (!base)
			base = g_strdup(inherited);
		else if (!*base) {
			g_free(base);
			base = g_strdup(FLATPAK_XDG_DEFAULT_DATA_DIRS);
		}
	}
	dirs = data_dirs_insert(base, f->mnt);
	{
		g_autofree char *have =
			g_key_file_get_string(kf, FLATPAK_GROUP_ENVIRONMENT,
					      FLATPAK_ENV_DATA_DIRS, NULL);

		if (!have || !streq(have, dirs))
			g_key_file_set_string(kf, FLATPAK_GROUP_ENVIRONMENT,
					      FLATPAK_ENV_DATA_DIRS, dirs);
	}
	*ret = g_key_file_to_data(kf, NULL, NULL);
	return 0;
}

/* The grant in `kf`: back to what `old` had of it (a "!xdg-run/iconfs" of
 * the user's comes back). */
static void strip_grant(GKeyFile *kf, GKeyFile *old)
{
	g_auto(GStrv) fs = NULL, old_fs = NULL;
	g_autoptr(GPtrArray) keep = g_ptr_array_new();
	bool changed = false;

	fs = g_key_file_get_string_list(kf, FLATPAK_GROUP_CONTEXT,
					FLATPAK_KEY_FILESYSTEMS, NULL, NULL);
	old_fs =
		g_key_file_get_string_list(old, FLATPAK_GROUP_CONTEXT,
					   FLATPAK_KEY_FILESYSTEMS, NULL, NULL);
	for (char **e = fs; e && *e; e++) {
		bool grants;

		if (flatpak_filesystem_is_ours(*e, &grants) &&
		    !flatpak_strv_has(old_fs, *e)) {
			changed = true;
			continue;
		}
		g_ptr_array_add(keep, *e);
	}
	for (char **e = old_fs; e && *e; e++) {
		bool grants;

		if (flatpak_filesystem_is_ours(*e, &grants) && !grants &&
		    !flatpak_strv_has(fs, *e)) {
			g_ptr_array_add(keep, *e);
			changed = true;
		}
	}
	if (changed && keep->len == 0 && !old_fs)
		(void)g_key_file_remove_key(kf, FLATPAK_GROUP_CONTEXT,
					    FLATPAK_KEY_FILESYSTEMS, NULL);
	else if (changed)
		g_key_file_set_string_list(
			kf, FLATPAK_GROUP_CONTEXT, FLATPAK_KEY_FILESYSTEMS,
			(const char *const *)keep->pdata, keep->len);
}

/* XDG_DATA_DIRS in `kf`: without the mount; gone if iconfs made it and it
 * is what the app would have anyway (or the file unset it), and unset
 * again where `old` unset it. */
static void strip_data_dirs(const struct flatpak *f, GKeyFile *kf,
			    GKeyFile *old, const char *inherited)
{
	g_auto(GStrv) old_unset = NULL;
	g_autofree char *dirs = NULL, *old_dirs = NULL;

	old_unset = g_key_file_get_string_list(
		old, FLATPAK_GROUP_CONTEXT, FLATPAK_KEY_UNSET_ENV, NULL, NULL);
	dirs = g_key_file_get_string(kf, FLATPAK_GROUP_ENVIRONMENT,
				     FLATPAK_ENV_DATA_DIRS, NULL);
	old_dirs = g_key_file_get_string(old, FLATPAK_GROUP_ENVIRONMENT,
					 FLATPAK_ENV_DATA_DIRS, NULL);
	if (dirs && flatpak_data_dirs_has(dirs, f->mnt) &&
	    !(old_dirs && flatpak_data_dirs_has(old_dirs, f->mnt))) {
		g_autofree char *without = data_dirs_remove(dirs, f->mnt);

		if (!old_dirs &&
		    (!inherited || streq(without, inherited) ||
		     flatpak_strv_has(old_unset, FLATPAK_ENV_DATA_DIRS)))
			(void)g_key_file_remove_key(
				kf, FLATPAK_GROUP_ENVIRONMENT,
				FLATPAK_ENV_DATA_DIRS, NULL);
		else
			g_key_file_set_string(kf, FLATPAK_GROUP_ENVIRONMENT,
					      FLATPAK_ENV_DATA_DIRS, without);
	}
	if (flatpak_strv_has(old_unset, FLATPAK_ENV_DATA_DIRS)) {
		g_auto(GStrv) unset = g_key_file_get_string_list(
			kf, FLATPAK_GROUP_CONTEXT, FLATPAK_KEY_UNSET_ENV, NULL,
			NULL);
		g_autoptr(GPtrArray) v = g_ptr_array_new();

		for (char **e = unset; e && *e; e++)
			g_ptr_array_add(v, *e);
		if (!flatpak_strv_has(unset, FLATPAK_ENV_DATA_DIRS))
			g_ptr_array_add(v, (char *)FLATPAK_ENV_DATA_DIRS);
		g_key_file_set_string_list(
			kf, FLATPAK_GROUP_CONTEXT, FLATPAK_KEY_UNSET_ENV,
			(const char *const *)v->pdata, v->len);
	}
}

int flatpak_override_strip(const struct flatpak *f, const char *current,
			   const char *before, const char *inherited,
			   char **ret, bool *ret_empty)
{
	g_autoptr(GKeyFile) kf = g_key_file_new();
	g_autoptr(GKeyFile) old = g_key_file_new();
	g_auto(GStrv) groups = NULL;

	if (!g_key_file_load_from_data(kf, current, -1,
				       G_KEY_FILE_KEEP_COMMENTS |
					       G_KEY_FILE_KEEP_TRANSLATIONS,
				       NULL) ||
	    (before && !g_key_file_load_from_data(old, before, -1, 0, NULL)))
		return -EINVAL;
	strip_grant(kf, old);
	strip_data_dirs(f, kf, old, inherited);
	if (!g_key_file_has_group(old, FLATPAK_GROUP_CONTEXT))
		group_drop_if_empty(kf, FLATPAK_GROUP_CONTEXT);
	if (!g_key_file_has_group(old, FLATPAK_GROUP_ENVIRONMENT))
		group_drop_if_empty(kf, FLATPAK_GROUP_ENVIRONMENT);
	groups = g_key_file_get_groups(kf, NULL);
	*ret_empty = !before && !groups[0];
	*ret = g_key_file_to_data(kf, NULL, NULL);
	return 0;
}
