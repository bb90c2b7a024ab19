"""Real toolkit clients, run in a child /usr/bin/python3 (Debian's, which
has python3-gi, PyQt5 and PyQt6) with XDG_DATA_DIRS pointing at the mount.
Usage: clients.py gtk3|gtk4|qt5|qt6 THEME SIZE NAME... ; prints one line per
name: "NAME<TAB>path-or-empty<TAB>width x height". gtk3-window realizes a
window of icon name NAME, as an app's start does (GTK loads the icon at
every size the theme lists the name at: "NAME<TAB>sizes"; SIZE unused)."""
import os
import sys

kind, theme, size, names = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]

if kind == "gtk3":
    import gi
    gi.require_version("Gtk", "3.0")
    gi.require_version("Gdk", "3.0")
    from gi.repository import Gdk, Gtk
    it = Gtk.IconTheme.new()
    it.set_custom_theme(theme)
    for n in names:
        info = it.lookup_icon(n, size, Gtk.IconLookupFlags.FORCE_SIZE)
        if not info:
            print(f"{n}\t\t")
            continue
        if n.endswith("-symbolic"):
            pb, _ = info.load_symbolic(Gdk.RGBA(1, 0, 0, 1), None, None, None)
            # recoloured: some pixel is pure red with alpha
            data = pb.get_pixels()
            step = pb.get_n_channels()
            red = any(data[i] == 255 and data[i + 1] == 0 and data[i + 2] == 0 and data[i + 3] > 0
                      for i in range(0, len(data) - 3, step))
            print(f"{n}\t{info.get_filename()}\t{pb.get_width()}x{pb.get_height()}\t{'red' if red else 'not-red'}")
        else:
            pb = info.load_icon()
            print(f"{n}\t{info.get_filename()}\t{pb.get_width()}x{pb.get_height()}")
elif kind == "gtk3-window":
    import gi
    gi.require_version("Gtk", "3.0")
    from gi.repository import Gtk
    Gtk.Settings.get_default().set_property("gtk-icon-theme-name", theme)
    for n in names:
        w = Gtk.Window()
        w.set_icon_name(n)
        w.realize()
        sizes = sorted(Gtk.IconTheme.get_default().get_icon_sizes(n))
        print(f"{n}\t{' '.join(map(str, sizes))}")
elif kind == "gtk3-watch":
    # one long-lived GtkIconTheme: does it notice a new icon by itself?
    import time
    import gi
    gi.require_version("Gtk", "3.0")
    from gi.repository import Gtk
    it = Gtk.IconTheme.new()
    it.set_custom_theme(theme)
    print("ready", flush=True)
    t0 = time.monotonic()
    while time.monotonic() - t0 < 30:
        info = it.lookup_icon(names[0], size, 0)
        if info:
            print(f"{names[0]}\t{info.get_filename()}\t{time.monotonic() - t0:.1f}", flush=True)
            break
        time.sleep(0.25)
elif kind == "gtk4":
    import gi
    gi.require_version("Gtk", "4.0")
    from gi.repository import Gtk
    Gtk.init()
    it = Gtk.IconTheme()
    it.set_theme_name(theme)
    for n in names:
        p = it.lookup_icon(n, None, size, 1, Gtk.TextDirection.LTR, 0)
        f = p.get_file()
        # GTK's built-in icons are resources: their URI
        path = (f.get_path() or f.get_uri()) if f else ""
        if path and path.endswith("image-missing.png") and n != "image-missing":
            path = ""
        print(f"{n}\t{path or ''}\t{p.get_intrinsic_width()}x{p.get_intrinsic_height()}")
elif kind in ("qt5", "qt6"):
    if kind == "qt5":
        from PyQt5.QtGui import QGuiApplication, QIcon
        from PyQt5.QtCore import QSize
    else:
        from PyQt6.QtGui import QGuiApplication, QIcon
        from PyQt6.QtCore import QSize
    app = QGuiApplication([])
    QIcon.setThemeName(theme)
    for n in names:
        icon = QIcon.fromTheme(n)
        pm = icon.pixmap(QSize(size, size))
        print(f"{n}\t{'found' if not icon.isNull() else ''}\t{pm.width()}x{pm.height()}")
