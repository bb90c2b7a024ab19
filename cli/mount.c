/* `iconfs mount`: into the background, the index opened once, the
 * synthesized files stored, then the mount served (fs_mount); see cli.h. */
#include <glib.h>
#include <unistd.h>

#include "cli.h"
#include "daemon.h"
#include "db.h"
#include "desktop.h"
#include "fs.h"
#include "index.h"
#include "log.h"
#include "macro.h"
#include "owner.h"
#include "watch.h"

/* Where a mount in the background logs when the machine has no journal
 * nor syslog: $XDG_STATE_HOME/iconfs/iconfs.log. */
static void open_background_log(void)
{
	g_autofree char *dir =
		g_build_filename(g_get_user_state_dir(), "iconfs", NULL);
	g_autofree char *file = g_build_filename(dir, "iconfs.log", NULL);

	(void)g_mkdir_with_parents(dir, 0700);
	log_open_background(file);
}

/* What the mount does once mounted, before it answers (fs_options'
 * prepare): the index's refresh, then the synthesized files it dates. */
struct mount_prepare {
	const struct cli_options *o;
	unsigned flags;
	struct watch *watch;
	char *const *basedirs;
	struct index_pending *index;
	const char *theme;
	bool refreshed; /* before the mount already */
};

static void mount_prepare(void *userdata)
{
	struct mount_prepare *m = userdata;
	sqlite3 *db = m->index->db;

	/* a refresh that fails leaves the index as it was to serve; the
	 * watcher's next stamp check tries again */
	if (!m->refreshed &&
	    cli_index_refresh(m->o, m->flags, watch_scanner(m->watch),
			      m->basedirs, m->index) < 0)
		log_error("cannot refresh the index: serving it as it is");
	(void)cli_store_synth(db, m->theme, m->o->rules);
	/* kept open, idle, for the whole mount (see its close below) */
	db_release_cache(db);
}

int cli_mount(struct cli_options *o)
{
	_cleanup_close_ int lock_fd = -1; /* released last */
	_cleanup_(index_pending_done) struct index_pending index = { 0 };
	_cleanup_(watch_freep) struct watch *watch = NULL;
	g_autofree char *mnt = cli_mountpoint(o);
	g_autofree char *theme = NULL;
	g_auto(GStrv) bases = NULL;
	enum desktop_source source;
	struct mount_prepare prepare;
	struct fs_options fo;
	unsigned flags = INDEX_CHECK | (o->foreground && isatty(STDOUT_FILENO)
						? INDEX_PROGRESS
						: 0);
	int ready_fd = -1, r;

	/* Into the background before anything starts a thread (GIO does, to
	 * read the desktop's setting; the index, the workers): a fork keeps
	 * only the calling thread. The command returns when the mount
	 * serves, with its status; what the daemon logs goes to the
	 * journal. */
	if (!o->foreground) {
		r = daemon_begin(&ready_fd);
		if (r < 0) {
			log_error_errno(r, "cannot fork: %m");
			return 1;
		}
		open_background_log();
	}
	if (o->db_why)
		log_info("%s", o->db_why);
	/* one daemon per index, from before the index is touched */
	if (owner_take(o->db, mnt, &lock_fd) < 0) {
		daemon_ready(&ready_fd, 1);
		return 1;
	}
	theme = desktop_theme(o->theme, &source);
	/* The index is opened, checked and migrated here, and refreshed
	 * once mounted (mount_prepare) when it, or the machine's index that
	 * a first login's is to copy then, holds the --theme; an index
	 * without it is refreshed first, for an unknown theme to fail the
	 * command. The refresh watches each directory just before it
	 * looks at it, so that the watcher has no refresh of its own to make
	 * (a relogin's daemon used to stat every directory twice). */
	watch = watch_new();
	r = cli_index_prepare(o, mnt, flags, &index, &bases);
	prepare = (struct mount_prepare){ o, flags, watch, bases, &index,
					  theme, false };
	if (r >= 0 && o->theme &&
	    !index_pending_theme_valid(&index, o->theme)) {
		r = cli_index_refresh(o, flags, watch_scanner(watch), bases,
				      &index);
		prepare.refreshed = true;
	}
	if (r < 0) {
		daemon_ready(&ready_fd, 1);
		return 1;
	}
	fo = (struct fs_options){
		.db = o->db,
		.shared_db = cli_shared_db(o),
		.basedirs = bases,
		.theme = theme,
		.theme_source = desktop_source_name(source),
		.theme_pinned = o->theme != NULL,
		.rules = o->rules,
		.mountpoint = mnt,
		.workers = (unsigned)o->workers,
		.budget = o->budget,
		.ready_fd = ready_fd,
		.watch = watch,
		.prepare = mount_prepare,
		.prepare_data = &prepare,
	};
	r = fs_mount(&fo);
	/* Closed last, when the mount's own connections are: a clean end
	 * leaves the file as checked plus SQLite's own writes, and stamps it
	 * so (db.h), so that the next login skips the check. */
	index_pending_done(&index);
	return r < 0 ? 1 : 0;
}
