/* The mount: `iconfs mount`, `iconfs umount` and `iconfs status`. The FUSE
 * handlers live in fs.c and stay thin; what a name means is in view.h and
 * tree.h, what a file holds in content.h. */
#pragma once

struct cli_options;

int fs_mount_main(struct cli_options *o);
int fs_umount(const char *mountpoint);
int fs_status_print(struct cli_options *o);

/* `iconfs render`: pre-render a theme's names at the given sizes into the
 * blob table, at idle priority; resumable (what is stored is skipped). */
int fs_prerender_main(struct cli_options *o);
