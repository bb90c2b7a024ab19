/* The render worker program (iconfs-render): rasterizes the sources the
 * render pool (render.h) sends on its socket (wire.h), confined by
 * sandbox.h, under memory and CPU limits. It links the decoders (librsvg,
 * gdk-pixbuf, cairo, libpng); the daemon and the commands do not. */
#pragma once

/* Serves requests on WIRE_FD until EOF; the program's exit status. */
int render_worker_main(void);
