/* `iconfs render`: fill the blob table ahead of time, for install-time or
 * login-time warm-up. Already stored renders are blob hits, so an
 * interrupted run resumes where it stopped. */
#include <errno.h>
#include <glib.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include "basedirs.h"
#include "cli.h"
#include "content.h"
#include "db.h"
#include "fs.h"
#include "log.h"
#include "lookup.h"
#include "view.h"

static int parse_sizes(const char *s, GArray **ret)
{
	g_auto(GStrv) parts = g_strsplit(s ? s : "16,24,32,48", ",", -1);
	GArray *sizes = g_array_new(FALSE, FALSE, sizeof(int));

	for (char **p = parts; *p; p++) {
		int size, scale;

		if (view_parse_flat_dir(g_strstrip(*p), &size, &scale) < 0 ||
		    scale != 1) {
			g_array_unref(sizes);
			return log_error_errno(-EINVAL,
					       "invalid size '%s' (1 to 1024)",
					       *p);
		}
		g_array_append_val(sizes, size);
	}
	*ret = sizes;
	return 0;
}

int fs_prerender_main(struct cli_options *o)
{
	_cleanup_(sqlite3_closep) sqlite3 *db = NULL;
	_cleanup_(lookup_freep) struct lookup *l = NULL;
	g_autofree char *mnt = basedirs_default_mountpoint();
	g_autofree char *theme = basedirs_default_theme(o->theme);
	g_autoptr(GPtrArray) names = NULL;
	g_autoptr(GArray) sizes = NULL;
	g_auto(GStrv) bases = NULL;
	struct content *c = NULL;
	bool tty = isatty(STDERR_FILENO);
	unsigned long long done = 0, total, failed = 0;
	int r;

	r = parse_sizes(o->sizes, &sizes);
	if (r < 0)
		return r;
	(void)setpriority(PRIO_PROCESS, 0, 19);
	r = cli_open_index(o, mnt, false, &db, &bases);
	if (r >= 0)
		r = lookup_new(db, &l);
	if (r >= 0)
		r = lookup_names(l, theme, &names);
	if (r >= 0)
		r = content_new(bases, (unsigned)o->workers, RENDER_DEADLINE_MS,
				1LL << 62, &c);
	if (r < 0)
		return r;

	total = (unsigned long long)names->len * sizes->len;
	for (unsigned s = 0; s < sizes->len; s++) {
		int size = g_array_index(sizes, int, s);

		for (unsigned i = 0; i < names->len; i++) {
			g_autofree char *src = NULL;
			struct icon_content ic = { 0 };
			int ext;

			done++;
			if (lookup_icon(l, theme, names->pdata[i], size, 1,
					&src, &ext) < 0)
				continue;
			if (content_resolve(c, db, src, ext, (unsigned)size,
					    &ic) < 0)
				failed++;
			icon_content_clear(&ic);
			if (tty && (done % 64 == 0 || done == total))
				fprintf(stderr,
					"\r\033[Krendering %s: %llu/%llu "
					"(%d px)",
					theme, done, total, size);
		}
	}
	if (tty)
		fprintf(stderr, "\r\033[K");
	printf("%s: %llu icons at %u sizes, %llu rendered, %llu from cache, "
	       "%llu native, %llu failed\n",
	       theme, (unsigned long long)names->len, sizes->len,
	       (unsigned long long)content_counters(c)->renders -
		       failed,
	       (unsigned long long)content_counters(c)->blob_hits,
	       (unsigned long long)content_counters(c)->native, failed);
	content_free(c);
	return failed ? -EIO : 0;
}
