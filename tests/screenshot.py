"""A small GTK 3 window: a grid of icons of one theme at 48 px, drawn
offscreen under Xvfb and saved as PNG. Usage: screenshot.py THEME OUT NAME..."""
import sys

import gi
gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk

theme, out, names = sys.argv[1], sys.argv[2], sys.argv[3:]
Gtk.Settings.get_default().set_property("gtk-icon-theme-name", theme)
win = Gtk.OffscreenWindow()
grid = Gtk.Grid(column_spacing=8, row_spacing=8, margin=8)
for i, n in enumerate(names):
    img = Gtk.Image.new_from_icon_name(n, Gtk.IconSize.DIALOG)
    img.set_pixel_size(48)
    grid.attach(img, i % 6, i // 6, 1, 1)
win.add(grid)
win.show_all()


def snap():
    win.get_pixbuf().savev(out, "png", [], [])
    Gtk.main_quit()
    return False


GLib.timeout_add(500, snap)
Gtk.main()
