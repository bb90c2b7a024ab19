/* The mount: the FUSE session and its low-level handlers, which stay thin:
 * each replies exactly once, and leaves what a name means to tree.h and
 * view.h (a LOOKUP also asks the prefetch whether to render ahead), what a
 * file holds to content.h and file.h, what a directory lists to listing.h
 * (a READDIRPLUS adds each entry's attributes from tree.h). */
#pragma once

#include <stdbool.h>

#include "lookup.h"

struct watch;

struct fs_options {
	const char *db;		  /* the index, opened (index_prepare) */
	const char *shared_db;	  /* the shared layer of renders, or NULL */
	char *const *basedirs;	  /* NULL-terminated */
	const char *theme;	  /* the theme of MNT/<N>/ */
	const char *theme_source; /* what chose it (desktop_source_name) */
	bool theme_pinned;	  /* --theme: do not follow the desktop */
	enum lookup_rules rules;  /* --rules: whose choices the mount makes */
	const char *mountpoint;
	unsigned workers; /* render worker processes */
	long long budget; /* bytes the stored renders may fill */
	int ready_fd;	  /* daemon_begin's, or -1 in the foreground */
	struct watch *watch; /* watch_new's, given to the index's refresh
			      * (borrowed: started and stopped here) */
	/* Called once mounted and ready (READY=1, ready_fd), before any
	 * request is answered: the index's refresh, which the login's first
	 * programs wait for only when they ask the mount before it ends
	 * (their requests wait in the kernel meanwhile). May be NULL. */
	void (*prepare)(void *userdata);
	void *prepare_data;
};

/* Mount and serve until unmounted or signalled. */
int fs_mount(const struct fs_options *o);

