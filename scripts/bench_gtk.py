"""GTK 3 client for scripts/bench (run by Debian's python3).
  bench_gtk.py load THEME SIZE NAME...   load every icon; print seconds spent
                                         from theme creation to the last load
  bench_gtk.py first THEME SIZE NAME     load one icon and exit"""
import sys
import time

t_start = time.monotonic()
import gi  # noqa: E402
gi.require_version("Gtk", "3.0")
from gi.repository import Gtk  # noqa: E402

mode, theme, size, names = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
t0 = time.monotonic()
it = Gtk.IconTheme.new()
it.set_custom_theme(theme)
loaded = 0
for n in names:
    info = it.lookup_icon(n, size, 0)
    if info and info.load_icon():
        loaded += 1
print(f"{time.monotonic() - t0:.6f} {loaded}")
