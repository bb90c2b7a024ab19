#!/usr/bin/python3
"""`gtk_icon.py THEME SIZE NAME...`: the files GTK 3 chooses for NAMEs at
SIZE px in THEME, as a program of the session would look them up (its
XDG_DATA_DIRS, no display needed for a GtkIconTheme of its own); one JSON
line. Run in the login box by tests/login/driver.py."""
import json
import os
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gtk  # noqa: E402

theme, size, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
icons = Gtk.IconTheme.new()
icons.set_custom_theme(theme)
found = {}
for name in names:
    info = icons.lookup_icon(name, size, 0)
    found[name] = info.get_filename() if info else None
print(json.dumps({"XDG_DATA_DIRS": os.environ.get("XDG_DATA_DIRS"),
                  "search_path": icons.get_search_path(), "icons": found}))
