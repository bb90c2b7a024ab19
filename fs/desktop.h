/* The desktop's icon theme setting: which theme the flattened views
 * (MNT/<N>/) serve, where that choice comes from, and following a change of
 * it live. In order: --theme (pinned); GNOME's GSettings key
 * org.gnome.desktop.interface icon-theme, when the user set it and the
 * schema is installed; gtk-icon-theme-name in GTK 4's, then GTK 3's
 * settings.ini; Theme in [Icons] of KDE's kdeglobals; the GSettings
 * schema's default where it is installed; hicolor. */
#pragma once

enum desktop_source {
	DESKTOP_OPTION,
	DESKTOP_GSETTINGS,
	DESKTOP_GTK,
	DESKTOP_KDE,
	DESKTOP_DEFAULT,
};

/* The theme (g_free) and what chose it (ret_source may be NULL). */
char *desktop_theme(const char *option, enum desktop_source *ret_source);
const char *desktop_source_name(enum desktop_source source);

/* Follow the setting: `fn` is called from a thread of its own with the new
 * theme whenever the chosen value changes (a GSettings change signal; a
 * change of settings.ini or kdeglobals). */
struct desktop_watch;
typedef void (*desktop_changed_fn)(const char *theme,
				   enum desktop_source source, void *userdata);
int desktop_watch_start(desktop_changed_fn fn, void *userdata,
			struct desktop_watch **ret);
void desktop_watch_stop(struct desktop_watch *w);
