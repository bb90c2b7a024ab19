/* The mount table; see mountinfo.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "mountinfo.h"

void mount_entry_clear(struct mount_entry *e)
{
	free(e->mountpoint);
	free(e->fstype);
	free(e->source);
	free(e->options);
	*e = (struct mount_entry){ 0 };
}

/* A field of `len` bytes with the kernel's octal escapes (\040 for a
 * space, \134 for a backslash) undone. */
static char *unescape(const char *s, size_t len)
{
	char *out = malloc(len + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\\' && i + 3 < len &&
		    s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' &&
		    s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
			*o++ = (char)((s[i + 1] - '0') << 6 |
				      (s[i + 2] - '0') << 3 | (s[i + 3] - '0'));
			i += 3;
		} else {
			*o++ = s[i];
		}
	}
	*o = '\0';
	return out;
}

/* The next space-separated field of *p: its start, and its length in
 * *ret_len; NULL at the end of the line. */
static const char *next_field(const char **p, size_t *ret_len)
{
	const char *s = *p, *e;

	while (*s == ' ')
		s++;
	if (!*s || *s == '\n')
		return NULL;
	e = s + strcspn(s, " \n");
	*ret_len = (size_t)(e - s);
	*p = e;
	return s;
}

int mountinfo_parse_line(const char *line, struct mount_entry *ret)
{
	const char *p = line, *f, *mnt = NULL;
	size_t len, mnt_len = 0;
	struct mount_entry e = { 0 };

	/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE
	 * SOURCE SUPER-OPTIONS */
	for (int i = 0; i < 6; i++) {
		f = next_field(&p, &len);
		if (!f)
			return -EINVAL;
		if (i == 4) {
			mnt = f;
			mnt_len = len;
		}
	}
	do
		f = next_field(&p, &len);
	while (f && !(len == 1 && *f == '-'));
	if (!f)
		return -EINVAL;
	e.mountpoint = unescape(mnt, mnt_len);
	f = next_field(&p, &len);
	e.fstype = f ? unescape(f, len) : NULL;
	f = next_field(&p, &len);
	e.source = f ? unescape(f, len) : NULL;
	f = next_field(&p, &len);
	e.options = f ? unescape(f, len) : NULL;
	if (!e.mountpoint || !e.fstype || !e.source || !e.options) {
		mount_entry_clear(&e);
		return -EINVAL;
	}
	*ret = e;
	return 0;
}

/* Whether mount point `mnt` is `path` or, with `containing`, a parent of
 * it; the length that matched (longer is closer), -1 when it does not. */
static ssize_t mount_matches(const char *mnt, const char *path,
			     bool containing)
{
	size_t n = strlen(mnt);

	if (streq(mnt, path))
		return (ssize_t)n;
	if (!containing)
		return -1;
	if (streq(mnt, "/"))
		return 1;
	if (strncmp(mnt, path, n) == 0 && path[n] == '/')
		return (ssize_t)n;
	return -1;
}

int mountinfo_find(const char *path, bool containing, struct mount_entry *ret)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	struct mount_entry best = { 0 };
	ssize_t best_len = -1;
	char *line = NULL;
	size_t size = 0;

	if (!f)
		return -errno;
	while (getline(&line, &size, f) > 0) {
		struct mount_entry e;
		ssize_t m;

		if (mountinfo_parse_line(line, &e) < 0)
			continue;
		m = mount_matches(e.mountpoint, path, containing);
		/* later lines are mounted on top of earlier ones */
		if (m >= 0 && m >= best_len) {
			mount_entry_clear(&best);
			best = e;
			best_len = m;
		} else {
			mount_entry_clear(&e);
		}
	}
	free(line);
	(void)fclose(f);
	if (best_len < 0)
		return 0;
	*ret = best;
	return 1;
}

char *mountinfo_path(const char *path)
{
	char parent[PATH_MAX], resolved[PATH_MAX], *out;
	const char *base = strrchr(path, '/');
	size_t n;

	if (!base || !base[1]) {
		errno = EINVAL;
		return NULL;
	}
	n = (size_t)(base - path);
	if (n >= sizeof(parent)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	memcpy(parent, path, n);
	parent[n] = '\0';
	if (!realpath(n ? parent : "/", resolved))
		return NULL;
	if (asprintf(&out, "%s%s%s", resolved, streq(resolved, "/") ? "" : "/",
		     base + 1) < 0) {
		errno = ENOMEM;
		return NULL;
	}
	return out;
}

bool mount_options_have(const char *options, const char *key,
			const char *value)
{
	size_t kn = strlen(key), vn = strlen(value);

	for (const char *p = options; p && *p;) {
		size_t n = strcspn(p, ",");

		if (n == kn + 1 + vn && strncmp(p, key, kn) == 0 &&
		    p[kn] == '=' && strncmp(p + kn + 1, value, vn) == 0)
			return true;
		p += n;
		if (*p == ',')
			p++;
	}
	return false;
}
