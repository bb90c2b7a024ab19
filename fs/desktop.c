/* The desktop's icon theme setting; see desktop.h. */
#include <errno.h>
#include <gio/gio.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "desktop.h"
#include "log.h"

#define GNOME_SCHEMA "org.gnome.desktop.interface"
#define GNOME_KEY    "icon-theme"

static char *config_path(const char *file)
{
	const char *config = g_getenv("XDG_CONFIG_HOME");

	if (config && *config == '/')
		return g_build_filename(config, file, NULL);
	return g_build_filename(g_get_home_dir(), ".config", file, NULL);
}

static char *config_value(const char *file, const char *group, const char *key)
{
	g_autoptr(GKeyFile) kf = g_key_file_new();
	g_autofree char *path = config_path(file);
	char *v;

	if (!g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, NULL))
		return NULL;
	v = g_key_file_get_string(kf, group, key, NULL);
	if (v && !*g_strstrip(v)) {
		g_free(v);
		return NULL;
	}
	return v;
}

/* GIO says which backend it picked as a message on stderr; not ours to
 * print. */
static void quiet(const gchar *domain, GLogLevelFlags level,
		  const gchar *message, gpointer data)
{
	(void)domain, (void)level, (void)message, (void)data;
}

/* The GNOME setting: the user's value (`user`) or the schema's default;
 * NULL where the schema is not installed or the value is empty. */
static char *gsettings_value(bool user)
{
	GSettingsSchemaSource *src = g_settings_schema_source_get_default();
	g_autoptr(GSettingsSchema) schema = NULL;
	g_autoptr(GSettings) gs = NULL;
	g_autoptr(GVariant) v = NULL;
	char *theme = NULL;
	guint handler;

	if (!src)
		return NULL;
	schema = g_settings_schema_source_lookup(src, GNOME_SCHEMA, TRUE);
	if (!schema || !g_settings_schema_has_key(schema, GNOME_KEY))
		return NULL;
	handler =
		g_log_set_handler("GLib-GIO", G_LOG_LEVEL_MESSAGE, quiet, NULL);
	gs = g_settings_new_full(schema, NULL, NULL);
	v = user ? g_settings_get_user_value(gs, GNOME_KEY)
		 : g_settings_get_value(gs, GNOME_KEY);
	g_log_remove_handler("GLib-GIO", handler);
	if (v && g_variant_is_of_type(v, G_VARIANT_TYPE_STRING) &&
	    *g_variant_get_string(v, NULL))
		theme = g_variant_dup_string(v, NULL);
	return theme;
}

char *desktop_theme(const char *option, enum desktop_source *ret_source)
{
	enum desktop_source source = DESKTOP_OPTION;
	char *v = NULL;

	if (option && *option)
		v = g_strdup(option);
	if (!v && (v = gsettings_value(true)))
		source = DESKTOP_GSETTINGS;
	if (!v && (v = config_value("gtk-4.0/settings.ini", "Settings",
				    "gtk-icon-theme-name")))
		source = DESKTOP_GTK;
	if (!v && (v = config_value("gtk-3.0/settings.ini", "Settings",
				    "gtk-icon-theme-name")))
		source = DESKTOP_GTK;
	if (!v && (v = config_value("kdeglobals", "Icons", "Theme")))
		source = DESKTOP_KDE;
	if (!v && (v = gsettings_value(false)))
		source = DESKTOP_GSETTINGS;
	if (!v) {
		v = g_strdup("hicolor");
		source = DESKTOP_DEFAULT;
	}
	if (ret_source)
		*ret_source = source;
	return v;
}

const char *desktop_source_name(enum desktop_source source)
{
	static const char *const names[] = {
		[DESKTOP_OPTION] = "--theme",
		[DESKTOP_GSETTINGS] = "GSettings " GNOME_SCHEMA " " GNOME_KEY,
		[DESKTOP_GTK] = "GTK settings.ini",
		[DESKTOP_KDE] = "KDE kdeglobals",
		[DESKTOP_DEFAULT] = "default",
	};

	return source < ELEMENTSOF(names) ? names[source] : "";
}

struct desktop_watch {
	desktop_changed_fn fn;
	void *userdata;
	GMainContext *context;
	GMainLoop *loop;
	pthread_t thread;
	char *theme; /* the thread's */
	GSettings *settings;
	GPtrArray *monitors; /* GFileMonitor */
	pthread_mutex_t lock;
	pthread_cond_t ready_cond;
	bool ready; /* lock */
};

static void desktop_check(struct desktop_watch *w)
{
	enum desktop_source source;
	g_autofree char *theme = desktop_theme(NULL, &source);

	if (g_strcmp0(theme, w->theme) == 0)
		return;
	g_free(w->theme);
	w->theme = g_strdup(theme);
	w->fn(theme, source, w->userdata);
}

static void on_settings_changed(GSettings *gs, const char *key, gpointer data)
{
	(void)gs, (void)key;
	desktop_check(data);
}

static void on_file_changed(GFileMonitor *m, GFile *file, GFile *other,
			    GFileMonitorEvent event, gpointer data)
{
	(void)m, (void)file, (void)other;
	if (event == G_FILE_MONITOR_EVENT_CHANGES_DONE_HINT ||
	    event == G_FILE_MONITOR_EVENT_CREATED ||
	    event == G_FILE_MONITOR_EVENT_DELETED ||
	    event == G_FILE_MONITOR_EVENT_MOVED_IN ||
	    event == G_FILE_MONITOR_EVENT_RENAMED)
		desktop_check(data);
}

/* GSettings' change signal and monitors of the files behind the other
 * sources, all dispatched in the thread's main loop. */
static void desktop_arm(struct desktop_watch *w)
{
	static const char *const files[] = { "gtk-4.0/settings.ini",
					     "gtk-3.0/settings.ini",
					     "kdeglobals" };
	GSettingsSchemaSource *src = g_settings_schema_source_get_default();
	g_autoptr(GSettingsSchema) schema =
		src ? g_settings_schema_source_lookup(src, GNOME_SCHEMA, TRUE)
		    : NULL;

	if (schema && g_settings_schema_has_key(schema, GNOME_KEY)) {
		guint handler = g_log_set_handler(
			"GLib-GIO", G_LOG_LEVEL_MESSAGE, quiet, NULL);

		w->settings = g_settings_new_full(schema, NULL, NULL);
		g_log_remove_handler("GLib-GIO", handler);
		g_signal_connect(w->settings, "changed::" GNOME_KEY,
				 G_CALLBACK(on_settings_changed), w);
		/* reading the key subscribes to its changes */
		g_free(g_settings_get_string(w->settings, GNOME_KEY));
	}
	for (size_t i = 0; i < ELEMENTSOF(files); i++) {
		g_autofree char *path = config_path(files[i]);
		g_autoptr(GFile) file = g_file_new_for_path(path);
		GFileMonitor *m = g_file_monitor_file(file, G_FILE_MONITOR_NONE,
						      NULL, NULL);

		if (!m)
			continue;
		g_file_monitor_set_rate_limit(m, 100);
		g_signal_connect(m, "changed", G_CALLBACK(on_file_changed), w);
		g_ptr_array_add(w->monitors, m);
	}
}

/* The thread iterates GLib's global default context: the settings backend
 * (a singleton, first made by whoever read a setting) delivers its change
 * notifications there, and nothing else in iconfs runs a GLib main loop. */
static void *desktop_main(void *arg)
{
	struct desktop_watch *w = arg;

	w->theme = desktop_theme(NULL, NULL);
	desktop_arm(w);
	pthread_mutex_lock(&w->lock);
	w->ready = true;
	pthread_cond_signal(&w->ready_cond);
	pthread_mutex_unlock(&w->lock);
	g_main_loop_run(w->loop);
	g_clear_object(&w->settings);
	g_ptr_array_set_size(w->monitors, 0);
	return NULL;
}

int desktop_watch_start(desktop_changed_fn fn, void *userdata,
			struct desktop_watch **ret)
{
	struct desktop_watch *w = g_new0(struct desktop_watch, 1);
	int r;

	w->fn = fn;
	w->userdata = userdata;
	w->context = g_main_context_ref(g_main_context_default());
	w->loop = g_main_loop_new(w->context, FALSE);
	w->monitors = g_ptr_array_new_with_free_func(g_object_unref);
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->ready_cond, NULL);
	r = -pthread_create(&w->thread, NULL, desktop_main, w);
	if (r < 0) {
		w->thread = 0;
		desktop_watch_stop(w);
		return log_error_errno(r,
				       "cannot follow the theme setting: %m");
	}
	/* armed before the mount serves: no change is missed */
	pthread_mutex_lock(&w->lock);
	while (!w->ready)
		pthread_cond_wait(&w->ready_cond, &w->lock);
	pthread_mutex_unlock(&w->lock);
	*ret = w;
	return 0;
}

static gboolean quit_loop(gpointer data)
{
	g_main_loop_quit(data);
	return G_SOURCE_REMOVE;
}

void desktop_watch_stop(struct desktop_watch *w)
{
	if (!w)
		return;
	if (w->thread) {
		g_main_context_invoke(w->context, quit_loop, w->loop);
		(void)pthread_join(w->thread, NULL);
	}
	g_ptr_array_unref(w->monitors);
	g_main_loop_unref(w->loop);
	g_main_context_unref(w->context);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->ready_cond);
	g_free(w->theme);
	g_free(w);
}
