#!/usr/bin/env python3
"""The same icons as without the mount, judged by real GTK (fidelity.py):
Papirus, breeze, Adwaita, oxygen and hicolor, a sample of each theme's
names, its symbolic ones, the installed apps' .desktop icons and GTK's
built-in names, at 16-96 px. GTK 3's pixels and GTK 4's picks, stock and
with the mount first in XDG_DATA_DIRS: no icon that stock shows is lost
through the mount, GTK's built-in icons and Adwaita's symbolic icons come
out identical, and a table of the differences by cause is printed (the
shares are the bench's figure F1; the goal is not a test)."""
import collections
import random
import shutil

import fidelity
from common import REAL_BASES, check, check_eq, finish, mounted, need_theme, shared_db, skip

THEMES = ["Papirus", "breeze", "Adwaita", "oxygen", "hicolor"]
need_theme(*THEMES)
if not shutil.which("xvfb-run"):
    skip("xvfb-run is needed (run scripts/setup)")
ORIGINAL = "/usr/local/share:/usr/share"

db = shared_db("real-index.sqlite")
with mounted(db, REAL_BASES, theme="Adwaita") as mnt:
    cases = fidelity.sample(mnt, THEMES, [16, 24, 32, 48, 64, 96], 30, random.Random(7))
    print(f"{len(cases)} lookups per toolkit")
    for kind in ("gtk3", "gtk4"):
        rows, counts = fidelity.measure(kind, cases, ORIGINAL, mnt)
        print(f"{kind}: {fidelity.share(counts):.1%} identical of those stock answers; {counts}")
        causes = collections.Counter((v, c[0]) for c, v, *_ in rows if v not in ("same", "none stock"))
        for (cause, theme), n in sorted(causes.items()):
            print(f"  {cause:28} {theme:10} {n}")
        lost = [(c, s) for c, v, s, *_ in rows if v == "lost"]
        check_eq(lost, [], f"{kind}: no icon that stock shows is lost through the mount")
        for c, v, s, p, src in rows:
            if c[1] in fidelity.BUILTIN and "/org/gtk/libgtk/" in s:
                check_eq(v, "same", f"{kind} {c}: GTK's built-in {s} through the mount ({p})")
            if c[0] == "Adwaita" and c[1].endswith("-symbolic") and kind == "gtk4":
                check_eq(v, "same", f"{kind} {c}: {s} through the mount ({p}, from {src})")
finish()
