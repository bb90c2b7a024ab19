/* Base directories and defaults; see basedirs.h. Nothing here touches the
 * mountpoint: paths are compared lexically, because resolving a path inside
 * our own mount from the daemon would deadlock. */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "basedirs.h"
#include "macro.h"
#include "netfs.h"

static const char *env_or(const char *name, const char *fallback)
{
	const char *v = getenv(name);
	return v && *v ? v : fallback;
}

static char *home_path(const char *suffix)
{
	return g_build_filename(g_get_home_dir(), suffix, NULL);
}

/* $XDG_CACHE_HOME/iconfs/index.sqlite */
static char *basedirs_default_db(void)
{
	const char *cache = getenv("XDG_CACHE_HOME");
	if (cache && *cache == '/')
		return g_build_filename(cache, "iconfs", "index.sqlite", NULL);
	g_autofree char *dflt = home_path(".cache");
	return g_build_filename(dflt, "iconfs", "index.sqlite", NULL);
}

/* This machine's id (/etc/machine-id, else the host name). */
static char *basedirs_machine_id(void)
{
	g_autofree char *id = NULL;

	if (g_file_get_contents("/etc/machine-id", &id, NULL, NULL) &&
	    *g_strstrip(id))
		return g_steal_pointer(&id);
	return g_strdup(g_get_host_name());
}

/* A local directory of this user's for the index: made 0700 if missing,
 * refused (NULL, with the reason) when it is a link, not a directory,
 * not the user's, or writable by others. */
static char *local_dir(const char *path, char **ret_refusal)
{
	struct stat st;

	if (mkdir(path, 0700) < 0 && errno != EEXIST) {
		*ret_refusal = g_strdup_printf("cannot create '%s': %s", path,
					       g_strerror(errno));
		return NULL;
	}
	if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != getuid() || (st.st_mode & 022)) {
		*ret_refusal = g_strdup_printf(
			"'%s' is not a directory of this user's that only it "
			"may write",
			path);
		return NULL;
	}
	return g_strdup(path);
}

void basedirs_index_path(const char *explicit_db, char **ret_path,
			 char **ret_why, bool *ret_in_memory)
{
	g_autofree char *path = explicit_db ? g_canonicalize_filename(
						      explicit_db, NULL)
					    : basedirs_default_db();
	g_autofree char *dir = g_path_get_dirname(path);
	_cleanup_free_ char *type = netfs_type_of(dir);
	g_autofree char *refusal = NULL, *local = NULL;
	const char *runtime = getenv("XDG_RUNTIME_DIR");

	*ret_why = NULL;
	*ret_in_memory = false;
	if (!type) {
		*ret_path = g_steal_pointer(&path);
		return;
	}
	if (explicit_db) {
		g_autofree char *id = basedirs_machine_id();
		g_autofree char *stem = g_str_has_suffix(path, ".sqlite")
						? g_strndup(path, strlen(path) - 7)
						: g_strdup(path);

		*ret_path = g_strdup_printf("%s.%s.sqlite", stem, id);
		*ret_why = g_strdup_printf(
			"'%s' is on a network filesystem (%s): this host uses "
			"'%s', so that two hosts never share one index",
			path, type, *ret_path);
		return;
	}
	{
		g_autofree char *tmp =
			g_strdup_printf("/var/tmp/iconfs-%u", (unsigned)getuid());

		local = local_dir(tmp, &refusal);
	}
	if (!local && runtime && *runtime == '/') {
		g_autofree char *rt =
			g_build_filename(runtime, "iconfs-cache", NULL);
		g_autofree char *second = NULL;

		local = local_dir(rt, &second);
		*ret_in_memory = local != NULL;
	}
	if (!local) {
		*ret_path = g_steal_pointer(&path);
		*ret_why = g_strdup_printf(
			"'%s' is on a network filesystem (%s), and no local "
			"directory could be had (%s): kept there",
			dir, type, refusal);
		return;
	}
	*ret_path = g_build_filename(local, "index.sqlite", NULL);
	*ret_why = g_strdup_printf(
		"the cache directory '%s' is on a network filesystem (%s): "
		"the index is kept on this host, in '%s'%s%s",
		dir, type, *ret_path,
		*ret_in_memory ? ", in memory with a smaller budget (" : "",
		refusal ? refusal : "");
	if (refusal) {
		char *w = g_strconcat(*ret_why, ")", NULL);

		g_free(*ret_why);
		*ret_why = w;
	}
}

char *basedirs_default_mountpoint(void)
{
	const char *runtime = getenv("XDG_RUNTIME_DIR");
	if (runtime && *runtime == '/')
		return g_build_filename(runtime, "iconfs", NULL);
	return g_strdup_printf("/run/user/%u/iconfs", (unsigned)getuid());
}

/* Lexically normalize an absolute path: collapse "//", "/./", "/x/../". */
static char *basedirs_normalize(const char *path)
{
	g_auto(GStrv) parts = g_strsplit(path, "/", -1);
	GPtrArray *keep = g_ptr_array_new();
	GString *out = g_string_new(NULL);

	for (char **p = parts; *p; p++) {
		if (!**p || streq(*p, "."))
			continue;
		if (streq(*p, "..")) {
			if (keep->len > 0)
				g_ptr_array_remove_index(keep, keep->len - 1);
			continue;
		}
		g_ptr_array_add(keep, *p);
	}
	for (guint i = 0; i < keep->len; i++) {
		g_string_append_c(out, '/');
		g_string_append(out, keep->pdata[i]);
	}
	if (out->len == 0)
		g_string_append_c(out, '/');
	g_ptr_array_free(keep, TRUE);
	return g_string_free(out, FALSE);
}

int basedirs_path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return 1;
	return strncmp(path, dir, n) == 0 &&
	       (path[n] == '\0' || path[n] == '/');
}

static void add_dir(GPtrArray *list, const char *dir, const char *mountpoint)
{
	g_autofree char *abs = NULL;
	char *norm;

	if (!dir || !*dir)
		return;
	if (dir[0] == '/') {
		abs = g_strdup(dir);
	} else {
		g_autofree char *cwd = g_get_current_dir();
		abs = g_build_filename(cwd, dir, NULL);
	}
	norm = basedirs_normalize(abs);
	if (mountpoint && basedirs_path_under(norm, mountpoint)) {
		g_free(norm);
		return;
	}
	for (guint i = 0; i < list->len; i++) {
		if (streq(list->pdata[i], norm)) {
			g_free(norm);
			return;
		}
	}
	g_ptr_array_add(list, norm);
}

char **basedirs_list(const char *icon_dirs, const char *mountpoint)
{
	g_autofree char *mnt =
		mountpoint ? basedirs_normalize(mountpoint) : NULL;
	GPtrArray *list = g_ptr_array_new();

	if (icon_dirs) {
		g_auto(GStrv) dirs = g_strsplit(icon_dirs, ":", -1);
		for (char **d = dirs; *d; d++)
			add_dir(list, *d, mnt);
	} else {
		g_autofree char *dot_icons = home_path(".icons");
		g_autofree char *data_home = NULL;
		g_auto(GStrv) data_dirs = NULL;
		const char *xdh = getenv("XDG_DATA_HOME");

		add_dir(list, dot_icons, mnt);
		if (xdh && *xdh == '/')
			data_home = g_build_filename(xdh, "icons", NULL);
		else
			data_home = home_path(".local/share/icons");
		add_dir(list, data_home, mnt);
		data_dirs = g_strsplit(
			env_or("XDG_DATA_DIRS", "/usr/local/share:/usr/share"),
			":", -1);
		for (char **d = data_dirs; *d; d++) {
			g_autofree char *icons = NULL;
			if (**d != '/')
				continue;
			icons = g_build_filename(*d, "icons", NULL);
			add_dir(list, icons, mnt);
		}
		add_dir(list, "/usr/share/pixmaps", mnt);
	}
	g_ptr_array_add(list, NULL);
	return (char **)g_ptr_array_free(list, FALSE);
}

struct basedirs_real {
	pthread_mutex_t lock;
	char **basedirs;
	char **real; /* NULL while a base directory does not exist; lock */
	int *fds;    /* O_PATH; -1 while it does not exist; lock */
};

struct basedirs_real *basedirs_real_new(char *const *basedirs)
{
	struct basedirs_real *b = g_new0(struct basedirs_real, 1);

	pthread_mutex_init(&b->lock, NULL);
	b->basedirs = g_strdupv((char **)basedirs);
	b->real = g_new0(char *, g_strv_length(b->basedirs) + 1);
	b->fds = g_new(int, g_strv_length(b->basedirs) + 1);
	for (guint i = 0; i <= g_strv_length(b->basedirs); i++)
		b->fds[i] = -1;
	return b;
}

struct basedirs_real *basedirs_real_free(struct basedirs_real *b)
{
	if (!b)
		return NULL;
	for (guint i = 0; b->basedirs[i]; i++) {
		free(b->real[i]);
		if (b->fds[i] >= 0)
			(void)close(b->fds[i]);
	}
	g_free(b->real);
	g_free(b->fds);
	g_strfreev(b->basedirs);
	pthread_mutex_destroy(&b->lock);
	g_free(b);
	return NULL;
}

char *basedirs_real_inside(struct basedirs_real *b, const char *path,
			   bool dir_ok)
{
	_cleanup_free_ char *real = realpath(path, NULL);
	bool inside = false;

	if (!real)
		return NULL;
	pthread_mutex_lock(&b->lock);
	for (guint i = 0; b->basedirs[i] && !inside; i++) {
		if (!b->real[i])
			b->real[i] = realpath(b->basedirs[i], NULL);
		inside = b->real[i] && basedirs_path_under(real, b->real[i]) &&
			 (dir_ok || !streq(real, b->real[i]));
	}
	pthread_mutex_unlock(&b->lock);
	return inside ? TAKE_PTR(real) : NULL;
}

int basedirs_open_beneath(struct basedirs_real *b, const char *path,
			  char **ret_real)
{
	struct open_how how = { .flags = O_RDONLY | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH |
					   RESOLVE_NO_MAGICLINKS };
	char proc[64], real[PATH_MAX];
	int dir = -1, fd;
	ssize_t n;
	guint i;

	for (i = 0; b->basedirs[i]; i++) {
		size_t len = strlen(b->basedirs[i]);

		if (strncmp(path, b->basedirs[i], len) == 0 && path[len] == '/')
			break;
	}
	if (!b->basedirs[i])
		return -EXDEV;
	/* opened once, kept: a descriptor is never replaced once valid */
	pthread_mutex_lock(&b->lock);
	if (b->fds[i] < 0)
		b->fds[i] =
			open(b->basedirs[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
	dir = b->fds[i];
	pthread_mutex_unlock(&b->lock);
	if (dir < 0)
		return -ENOENT;
	fd = (int)syscall(SYS_openat2, dir, path + strlen(b->basedirs[i]) + 1,
			  &how, sizeof(how));
	if (fd < 0)
		return -errno;
	if (!ret_real)
		return fd;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, real, sizeof(real) - 1);
	if (n <= 0 || real[0] != '/') {
		(void)close(fd);
		return -ENOENT;
	}
	real[n] = '\0';
	*ret_real = strdup(real);
	if (!*ret_real) {
		(void)close(fd);
		return -ENOMEM;
	}
	return fd;
}
