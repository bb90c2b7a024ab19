/* The desktop's icon theme setting (desktop.h), in the order the design
 * fixes: --theme, GSettings where the user set it, GTK 4's then GTK 3's
 * settings.ini, KDE's kdeglobals, else the default; read from a
 * configuration directory of the test's own (GSettings in memory). */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>

#include "desktop.h"
#include "test.h"

static char *config;

static void put(const char *rel, const char *text)
{
	g_autofree char *path = g_build_filename(config, rel, NULL);
	g_autofree char *dir = g_path_get_dirname(path);

	g_mkdir_with_parents(dir, 0700);
	g_file_set_contents(path, text, -1, NULL);
}

static void drop(const char *rel)
{
	g_autofree char *path = g_build_filename(config, rel, NULL);

	(void)g_unlink(path);
}

static char *theme_of(const char *option, enum desktop_source *src)
{
	return desktop_theme(option, src);
}

TEST(order)
{
	enum desktop_source src;
	g_autofree char *opt = NULL, *gtk4 = NULL, *gtk3 = NULL, *kde = NULL,
			*dflt = NULL, *bad = NULL;

	put("gtk-4.0/settings.ini",
	    "[Settings]\ngtk-icon-theme-name=FromGtk4\n");
	put("gtk-3.0/settings.ini",
	    "[Settings]\ngtk-icon-theme-name=FromGtk3\n");
	put("kdeglobals", "[Icons]\nTheme=FromKde\n");

	opt = theme_of("Pinned", &src);
	ASSERT_EQ_STR(opt, "Pinned");
	ASSERT_EQ_INT(src, DESKTOP_OPTION);

	gtk4 = theme_of(NULL, &src);
	ASSERT_EQ_STR(gtk4, "FromGtk4");
	ASSERT_EQ_INT(src, DESKTOP_GTK);

	drop("gtk-4.0/settings.ini");
	gtk3 = theme_of(NULL, &src);
	ASSERT_EQ_STR(gtk3, "FromGtk3");
	ASSERT_EQ_INT(src, DESKTOP_GTK);

	drop("gtk-3.0/settings.ini");
	kde = theme_of(NULL, &src);
	ASSERT_EQ_STR(kde, "FromKde");
	ASSERT_EQ_INT(src, DESKTOP_KDE);

	/* a malformed file is no setting */
	put("kdeglobals", "this is not a key file\n");
	bad = theme_of(NULL, &src);

	/* nothing set: the GSettings schema's default where it is installed
	 * (Debian's gsettings-desktop-schemas: Adwaita), else hicolor */
	drop("kdeglobals");
	dflt = theme_of(NULL, &src);
	ASSERT_TRUE((g_str_equal(dflt, "Adwaita") && src == DESKTOP_GSETTINGS) ||
		    (g_str_equal(dflt, "hicolor") && src == DESKTOP_DEFAULT));
	ASSERT_EQ_STR(bad, dflt);
	ASSERT_EQ_STR(desktop_source_name(DESKTOP_KDE), "KDE kdeglobals");
}

int main(void)
{
	static const struct test_case cases[] = { TEST_CASE(order) };
	g_autofree char *tmp = g_dir_make_tmp("test-desktop-XXXXXX", NULL);
	int r;

	config = g_build_filename(tmp, "config", NULL);
	g_setenv("XDG_CONFIG_HOME", config, TRUE);
	g_setenv("GSETTINGS_BACKEND", "memory", TRUE);
	/* no GIO modules (dconf's): GIO's module loading keeps allocations
	 * valgrind counts as lost, and the memory backend is built in */
	g_setenv("GIO_MODULE_DIR", tmp, TRUE);
	r = test_run(cases, ELEMENTSOF(cases));
	{
		g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", tmp);

		(void)!system(cmd);
	}
	g_free(config);
	return r;
}
