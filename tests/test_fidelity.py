#!/usr/bin/env python3
"""The same icons as without the mount, judged by the real toolkits
(fidelity.py): Papirus, breeze, Adwaita, oxygen and hicolor, a sample of
each theme's names, its symbolic ones, the installed apps' .desktop icons
and GTK's built-in names, at 16-96 px, stock and with the mount first in
XDG_DATA_DIRS, each toolkit through a mount of its own rules:
- --rules gtk: GTK 3's pixels, GTK 4's picks; GTK's built-in icons and
  Adwaita's symbolic icons come out identical; and GTK 3 against Qt 6
  through that mount (the bench's F3); GTK 3 and 4 also at scale 2, where
  a theme's own drawing for a size at scale 2 comes out identical;
- --rules kde: the file KIconLoader (kiconfinder5) picks at each theme's
  Desktop size; an SVG it picks stock reaches it as an SVG (so that it can
  recolour it);
- --rules qt: Qt 6's pixels.
No icon that stock shows is lost through any; a table of the differences
by cause is printed (the shares are the bench's F1-F3; their goals are not
tests)."""
import collections
import random
import re
import shutil

import fidelity
from common import REAL_BASES, check, check_eq, finish, mounted, need_theme, shared_db, skip

THEMES = ["Papirus", "breeze", "Adwaita", "oxygen", "hicolor"]
need_theme(*THEMES)
for tool in ("xvfb-run", "kiconfinder5"):
    if not shutil.which(tool):
        skip(f"{tool} is needed (run scripts/setup)")
ORIGINAL = "/usr/local/share:/usr/share"


def report(kind, rows, counts):
    print(f"{kind}: {fidelity.share(counts):.1%} identical of those stock answers; {counts}")
    causes = collections.Counter((v, c[0]) for c, v, *_ in rows if v not in ("same", "none stock"))
    for (cause, theme), n in sorted(causes.items()):
        print(f"  {cause:36} {theme:10} {n}")
    lost = [(c, s) for c, v, s, *_ in rows if v == "lost"]
    check_eq(lost, [], f"{kind}: no icon that stock shows is lost through the mount")


def own_scale2(path, size):
    """Whether `path` is in a theme's Scale=2 directory of Size `size`
    ("22x22@2x/devices", "actions/22@2x")."""
    m = re.search(r"/(\d+)(?:x\d+)?@2x/", path or "")
    return bool(m) and int(m.group(1)) == size


def sample(mnt):
    return fidelity.sample(mnt, THEMES, [16, 24, 32, 48, 64, 96], 30, random.Random(7))


db = shared_db("real-index.sqlite")
with mounted(db, REAL_BASES, theme="Adwaita", extra=["--rules", "gtk"]) as mnt:
    cases = sample(mnt)
    print(f"{len(cases)} lookups per toolkit")
    via = {}
    for kind in ("gtk3", "gtk4", "qt6"):
        stock, via[kind] = fidelity.results(kind, cases, ORIGINAL, mnt)
        rows, counts = fidelity.compare(kind, cases, stock, via[kind], mnt)
        report(f"{kind} (rules gtk)", rows, counts)
        for c, v, s, p, src in rows:
            if kind == "qt6":
                continue
            if c[1] in fidelity.BUILTIN and "/org/gtk/libgtk/" in s:
                check_eq(v, "same", f"{kind} {c}: GTK's built-in {s} through the mount ({p})")
            if c[0] == "Adwaita" and c[1].endswith("-symbolic") and kind == "gtk4":
                check_eq(v, "same", f"{kind} {c}: {s} through the mount ({p}, from {src})")
    both, same = fidelity.agreement(cases, via["gtk3"], via["qt6"])
    print(f"GTK 3 and Qt 6 through the mount: {same} of {both} non-symbolic lookups the same")
    check(both > 0, "GTK 3 and Qt 6 both answer lookups through the mount")

    # at scale 2 (a HiDPI session), where a theme has its own drawing of a
    # size N for scale 2 (Papirus's 22x22@2x/devices/computer.svg, the
    # 22 px design at 44 px): GTK takes it before the 2N px one (48x48's)
    # without the mount, and must through it
    cases2 = [(t, n, z, 2) for t, n, z in
              fidelity.sample(mnt, THEMES, [16, 22, 24, 32, 48], 30, random.Random(7))]
    for kind in ("gtk3", "gtk4"):
        rows, counts = fidelity.measure(kind, cases2, ORIGINAL, mnt)
        report(f"{kind} at scale 2 (rules gtk)", rows, counts)
        own = [(c, s, src) for c, v, s, p, src in rows
               if own_scale2(s, c[2]) and not c[1].endswith("-symbolic")
               and v not in ("same", fidelity.FAINT)]
        check(any(own_scale2(s, c[2]) for c, _, s, *_ in rows),
              f"{kind}: the sample has lookups of themes' own scale-2 drawings")
        check_eq(own, [], f"{kind} at scale 2: a theme's own drawing for it through the mount")

with mounted(db, REAL_BASES, theme="Adwaita", extra=["--rules", "kde"]) as mnt:
    cases = fidelity.kde_cases(sample(mnt))
    rows, counts = fidelity.measure("kde", cases, ORIGINAL, mnt)
    report("KIconLoader (rules kde)", rows, counts)
    flat = [(c, s, p) for c, v, s, p, _ in rows if v.startswith("svg served as png")]
    check_eq(flat, [], "KIconLoader gets the SVGs it picks stock as SVGs (recolourable)")

with mounted(db, REAL_BASES, theme="Adwaita", extra=["--rules", "qt"]) as mnt:
    cases = sample(mnt)
    rows, counts = fidelity.measure("qt6", cases, ORIGINAL, mnt)
    report("qt6 (rules qt)", rows, counts)
finish()
