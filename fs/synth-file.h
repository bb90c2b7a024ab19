/* The bytes of a theme's two synthesized files: its index.theme (GKeyFile
 * text) and its icon-theme.cache (iconcache.h's format), made from synth's
 * sizes and name lists and from what the index says of the theme itself
 * (its Name, Comment, Example and KDE keys; hicolor's directories of GTK's
 * built-in icons). What each file holds per rules: enum synth_file in
 * synth.h. Each call builds anew, with the caller's struct lookup and its
 * thread; synth.c keeps and stores what they return (synth_file() is the
 * way to them). The result is a new GBytes (g_bytes_unref). */
#pragma once

#include <glib.h>

#include "lookup.h"
#include "synth.h"

int synth_file_index_theme(struct synth *s, struct lookup *l, const char *theme,
			   GBytes **ret);

int synth_file_icon_cache(struct synth *s, struct lookup *l, const char *theme,
			  GBytes **ret);
