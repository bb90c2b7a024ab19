/* index.theme parsing on top of GLib's GKeyFile; see theme.h. The text is
 * cleaned first (UTF-8 repaired, CR dropped, lines GKeyFile would reject
 * removed) so that one bad line costs that line, not the whole theme. */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <string.h>
#include <sys/stat.h>

#include "log.h"
#include "theme.h"

#define THEME_FILE_MAX (16 * 1024 * 1024)
#define THEME_GROUP    "Icon Theme"

struct theme_info *theme_info_free(struct theme_info *info)
{
	if (!info)
		return NULL;
	g_free(info->name);
	g_free(info->comment);
	g_free(info->example);
	g_strfreev(info->inherits);
	g_free(info->kde_keys);
	for (size_t i = 0; i < info->n_subdirs; i++) {
		g_free(info->subdirs[i].path);
		g_free(info->subdirs[i].context);
	}
	g_free(info->subdirs);
	g_free(info);
	return NULL;
}

char **theme_split_list(const char *value)
{
	g_auto(GStrv) parts = g_strsplit(value ? value : "", ",", -1);
	GPtrArray *out = g_ptr_array_new();

	for (char **p = parts; *p; p++) {
		char *s = g_strstrip(*p);
		if (*s)
			g_ptr_array_add(out, g_strdup(s));
	}
	g_ptr_array_add(out, NULL);
	return (char **)g_ptr_array_free(out, FALSE);
}

int theme_subdir_path_valid(const char *path)
{
	g_auto(GStrv) parts = NULL;

	if (!*path || path[0] == '/')
		return 0;
	parts = g_strsplit(path, "/", -1);
	for (char **p = parts; *p; p++)
		if (!**p || streq(*p, ".") || streq(*p, ".."))
			return 0;
	return 1;
}

/* Keep group headers, key=value lines, comments and blank lines; drop the
 * rest. Returns a new string and the number of the first dropped line. */
static char *theme_clean_text(const char *data, size_t len, int *ret_bad_line)
{
	g_autofree char *valid = g_utf8_make_valid(data, len);
	g_auto(GStrv) lines = g_strsplit(valid, "\n", -1);
	GString *out = g_string_sized_new(len + 1);
	int line_no = 0;

	*ret_bad_line = 0;
	for (char **l = lines; *l; l++) {
		char *s = *l;
		size_t n = strlen(s);
		const char *t;

		line_no++;
		if (n > 0 && s[n - 1] == '\r')
			s[--n] = '\0';
		t = s;
		while (*t == ' ' || *t == '\t')
			t++;
		if (*t == '\0' || *t == '#' || (*t == '[' && strchr(t, ']')) ||
		    (strchr(t, '=') && *t != '=')) {
			if (*t == '[') {
				/* GKeyFile rejects text after ']' */
				g_string_append_len(out, t,
						    strchr(t, ']') - t + 1);
			} else {
				g_string_append(out, t);
			}
			g_string_append_c(out, '\n');
		} else if (*ret_bad_line == 0) {
			*ret_bad_line = line_no;
		}
	}
	return g_string_free(out, FALSE);
}

static int theme_get_int(GKeyFile *kf, const char *group, const char *key,
			 int def, int *ret)
{
	g_autoptr(GError) error = NULL;
	int v;

	if (!g_key_file_has_key(kf, group, key, NULL)) {
		*ret = def;
		return 0;
	}
	v = g_key_file_get_integer(kf, group, key, &error);
	if (error)
		return -EINVAL;
	*ret = v;
	return 0;
}

static int theme_subdir_parse(GKeyFile *kf, const char *path,
			      const char *origin, struct theme_subdir *ret)
{
	g_autofree char *type = NULL;
	struct theme_subdir sd = { 0 };

	if (!theme_subdir_path_valid(path)) {
		log_warning("%s: directory '%s' is not a relative path, "
			    "skipped",
			    origin, path);
		return -EINVAL;
	}
	if (!g_key_file_has_group(kf, path))
		return -ENOENT; /* silently: common in real themes */
	if (!g_key_file_has_key(kf, path, "Size", NULL) ||
	    theme_get_int(kf, path, "Size", 0, &sd.size) < 0 || sd.size <= 0) {
		log_warning("%s: directory '%s' has no valid Size, skipped",
			    origin, path);
		return -EINVAL;
	}
	if (theme_get_int(kf, path, "Scale", 1, &sd.scale) < 0 || sd.scale < 1)
		sd.scale = 1;
	if (theme_get_int(kf, path, "MinSize", sd.size, &sd.min_size) < 0)
		sd.min_size = sd.size;
	if (theme_get_int(kf, path, "MaxSize", sd.size, &sd.max_size) < 0)
		sd.max_size = sd.size;
	if (theme_get_int(kf, path, "Threshold", 2, &sd.threshold) < 0)
		sd.threshold = 2;

	type = g_key_file_get_string(kf, path, "Type", NULL);
	if (type)
		g_strstrip(type);
	if (type && streq(type, "Fixed"))
		sd.type = THEME_DIR_FIXED;
	else if (type && streq(type, "Scalable"))
		sd.type = THEME_DIR_SCALABLE;
	else
		sd.type = THEME_DIR_THRESHOLD;

	sd.context = g_key_file_get_string(kf, path, "Context", NULL);
	if (sd.context)
		g_strstrip(sd.context);
	sd.path = g_strdup(path);
	*ret = sd;
	return 0;
}

const char *const theme_kde_keys[] = {
	"DesktopDefault",     "DesktopSizes",	  "ToolbarDefault", "ToolbarSizes",
	"MainToolbarDefault", "MainToolbarSizes", "SmallDefault",   "SmallSizes",
	"PanelDefault",	      "PanelSizes",	  "DialogDefault",  "DialogSizes",
	"FollowsColorScheme", NULL,
};

int theme_context_kde_known(const char *context)
{
	static const char *const known[] = {
		"Devices",    "MimeTypes",  "FileSystems", "Applications",
		"Actions",    "Animations", "Categories",  "Emblems",
		"Emotes",     "International", "Places",   "Status",
	};

	if (!context || !*context)
		return 1;
	for (size_t i = 0; i < ELEMENTSOF(known); i++)
		if (streq(context, known[i]))
			return 1;
	return 0;
}

/* The KDE keys the file has, as stored (theme_info.kde_keys): raw values,
 * which KDE reads back with its own parser. */
static char *theme_kde_keys_of(GKeyFile *kf)
{
	GString *out = g_string_new("");

	for (const char *const *k = theme_kde_keys; *k; k++) {
		g_autofree char *v = g_key_file_get_value(kf, THEME_GROUP, *k, NULL);

		if (v && !strpbrk(v, "\n"))
			g_string_append_printf(out, "%s=%s\n", *k, g_strstrip(v));
	}
	return g_string_free(out, FALSE);
}

static void theme_add_subdirs(GKeyFile *kf, const char *key, GHashTable *seen,
			      GArray *out, const char *origin)
{
	g_autofree char *value =
		g_key_file_get_string(kf, THEME_GROUP, key, NULL);
	g_auto(GStrv) dirs = theme_split_list(value);

	for (char **d = dirs; *d; d++) {
		struct theme_subdir sd;
		size_t n = strlen(*d);

		while (n > 1 && (*d)[n - 1] == '/')
			(*d)[--n] = '\0';
		if (g_hash_table_contains(seen, *d))
			continue;
		if (theme_subdir_parse(kf, *d, origin, &sd) < 0)
			continue;
		g_hash_table_add(seen, sd.path);
		g_array_append_val(out, sd);
	}
}

int theme_info_parse(const char *data, size_t len, const char *origin,
		     struct theme_info **ret)
{
	g_autoptr(GKeyFile) kf = g_key_file_new();
	g_autoptr(GError) error = NULL;
	g_autoptr(GHashTable) seen = NULL;
	g_autofree char *text = NULL;
	g_autofree char *inherits = NULL;
	struct theme_info *info;
	GArray *subdirs;
	int bad_line;

	text = theme_clean_text(data, len, &bad_line);
	if (bad_line > 0)
		log_warning("%s:%d: line is not a group, key or comment, "
			    "ignored",
			    origin, bad_line);
	if (!g_key_file_load_from_data(kf, text, (gsize)-1, G_KEY_FILE_NONE,
				       &error))
		return log_error_errno(-EBADMSG, "%s: %s", origin,
				       error->message);
	if (!g_key_file_has_group(kf, THEME_GROUP))
		return log_error_errno(-EBADMSG,
				       "%s: no [Icon Theme] group, not a theme",
				       origin);

	info = g_new0(struct theme_info, 1);
	info->name = g_key_file_get_string(kf, THEME_GROUP, "Name", NULL);
	info->comment = g_key_file_get_string(kf, THEME_GROUP, "Comment", NULL);
	info->example = g_key_file_get_string(kf, THEME_GROUP, "Example", NULL);
	info->hidden = g_key_file_get_boolean(kf, THEME_GROUP, "Hidden", NULL);
	inherits = g_key_file_get_string(kf, THEME_GROUP, "Inherits", NULL);
	info->inherits = theme_split_list(inherits);
	info->kde_keys = theme_kde_keys_of(kf);

	seen = g_hash_table_new(g_str_hash, g_str_equal);
	subdirs = g_array_new(FALSE, FALSE, sizeof(struct theme_subdir));
	theme_add_subdirs(kf, "Directories", seen, subdirs, origin);
	theme_add_subdirs(kf, "ScaledDirectories", seen, subdirs, origin);
	info->n_subdirs = subdirs->len;
	info->subdirs = (struct theme_subdir *)g_array_free(subdirs, FALSE);

	*ret = info;
	return 0;
}

int theme_info_load(const char *path, struct theme_info **ret)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *data = NULL;
	struct stat st;
	gsize len;

	if (stat(path, &st) < 0)
		return log_error_errno(-errno, "cannot read '%s': %m", path);
	if (!S_ISREG(st.st_mode))
		return log_error_errno(-EINVAL, "'%s' is not a regular file",
				       path);
	if (st.st_size > THEME_FILE_MAX)
		return log_error_errno(-EFBIG, "'%s' is too large (%lld bytes)",
				       path, (long long)st.st_size);
	if (!g_file_get_contents(path, &data, &len, &error)) {
		int r = error->domain == G_FILE_ERROR &&
					error->code == G_FILE_ERROR_ACCES
				? -EACCES
				: -EIO;
		return log_error_errno(r, "cannot read '%s': %s", path,
				       error->message);
	}
	return theme_info_parse(data, len, path, ret);
}
