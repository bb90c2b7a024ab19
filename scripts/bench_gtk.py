"""GTK 3 client for scripts/bench (run by Debian's python3).
  bench_gtk.py load THEME SIZE NAME...   load every icon; print seconds spent
                                         from theme creation to the last load
  bench_gtk.py first THEME SIZE NAME     load one icon and exit
Prints `SECONDS LOADED`, then where the time went: the first lookup (GTK
reads the themes' index.theme and icon-theme.cache), the other lookups, and
the loads (opening, reading and decoding the files), in seconds."""
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
first = lookups = loads = 0.0
for i, n in enumerate(names):
    t1 = time.monotonic()
    info = it.lookup_icon(n, size, 0)
    t2 = time.monotonic()
    if info and info.load_icon():
        loaded += 1
    t3 = time.monotonic()
    if i == 0:
        first = t2 - t1
    else:
        lookups += t2 - t1
    loads += t3 - t2
print(f"{time.monotonic() - t0:.6f} {loaded} {first:.6f} {lookups:.6f} {loads:.6f}")
