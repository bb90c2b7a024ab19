"""scripts/bench's figures of fidelity to the stock toolkits, F1-F3:
test_fidelity.py's comparison (tests/fidelity.py), the same sample, through
a mount of the rules of a session (bench_lib.py says how a figure
declares its set-up)."""
import os
import random
import shutil

import fidelity
from bench_lib import BASES, figure, mounted, not_run, provider, row

F1_GOAL = ("F1 GTK session (rules gtk): GTK 3 >= 99% of lookups pixel-identical to stock "
           "(max channel difference <= 2), GTK 4 >= 99% within 16, 0 icons lost in either")
F2_GOAL = ("F2 KDE session (rules kde): KIconLoader picks the same source as stock in >= 99% "
           "of lookups at 16, 22, 32, 48, 64 and at its default group size, 0 lost, "
           "recolouring kept")
F3_GOAL = ("F3 GTK session: through the mount, GTK 3 and Qt 6 show the same pixels for >= 99% "
           "of non-symbolic lookups (stock: 41% differ markedly)")
FIDELITY_THEMES = ["Papirus", "breeze", "Adwaita", "oxygen", "hicolor"]
ORIGINAL = "/usr/local/share:/usr/share"


def themes_installed():
    return all(os.path.isfile(f"/usr/share/icons/{t}/index.theme") for t in FIDELITY_THEMES)


def fidelity_sample(mnt):
    return fidelity.sample(mnt, FIDELITY_THEMES, [16, 24, 32, 48, 64, 96], 30, random.Random(7))


def missing_theme(fig, goal):
    not_run(fig, "fidelity to the stock toolkits", "a theme is not installed", goal_text=goal)


@provider("gtk_session", needs=("index",))
def _gtk_session(c):
    """F1's and F3's lookups, `c.gtk_session`: the sample, and GTK 3's,
    GTK 4's and Qt 6's results stock and through a mount of the gtk rules
    (None when a theme of the sample is not installed)."""
    c.gtk_session = None
    if not themes_installed():
        return
    with mounted(c.db, BASES, theme="Adwaita", extra=["--rules", "gtk"]) as mnt:
        cases = fidelity_sample(mnt)
        c.gtk_session = {"cases": cases, "mnt": mnt}
        for kind in ("gtk3", "gtk4", "qt6"):
            c.gtk_session[kind] = fidelity.results(kind, cases, ORIGINAL, mnt)


@figure("F1", needs=("gtk_session",))
def f1_gtk(c):
    """F1: GTK 3 and GTK 4 through a mount of the gtk rules against stock.
    GTK 4 is judged by the file it picks (the same file, or the mount's
    file of it): PyGObject cannot hand GTK 4's pixels back."""
    s = c.gtk_session
    if s is None:
        missing_theme("F1", F1_GOAL)
        return
    lost = 0
    for kind, what in (("gtk3", "GTK 3 lookups pixel-identical to stock"),
                       ("gtk4", "GTK 4 lookups picking stock's file")):
        _, counts = fidelity.compare(kind, s["cases"], *s[kind], s["mnt"])
        lost += counts.get("lost", 0)
        row("F1", f"{what} ({len(s['cases'])})", [100 * fidelity.share(counts)], "%",
            goal=99, better="higher", judge="value", goal_text=F1_GOAL,
            note=", ".join(f"{k} {n}" for k, n in sorted(counts.items())))
    row("F1", "icons stock shows that the mount loses", [lost], "", goal=0,
        judge="value", goal_text=F1_GOAL)


@figure("F3", needs=("gtk_session",))
def f3_gtk_qt(c):
    """F3: GTK 3's pixels against Qt 6's (colours weighed by alpha: Qt
    keeps pixmaps premultiplied), both through the mount, and both stock
    for the anchor."""
    s = c.gtk_session
    if s is None:
        missing_theme("F3", F3_GOAL)
        return
    both, same = fidelity.agreement(s["cases"], s["gtk3"][1], s["qt6"][1])
    sboth, ssame = fidelity.agreement(s["cases"], s["gtk3"][0], s["qt6"][0])
    row("F3", f"GTK 3 and Qt 6 the same through the mount ({both})",
        [100 * same / both if both else 0], "%", goal=99, better="higher", judge="value",
        goal_text=F3_GOAL,
        note=f"stock: {100 * ssame / sboth if sboth else 0:.1f}% the same ({sboth})")


@figure("F2", needs=("index",))
def f2_kde(c):
    """F2: KIconLoader (kiconfinder5) stock and through a mount of the kde
    rules, at each theme's Desktop group size: kiconfinder5 asks no other
    size, so the explicit sizes are not measured here."""
    if not themes_installed():
        missing_theme("F2", F2_GOAL)
        return
    if not shutil.which("kiconfinder5"):
        not_run("F2", "KIconLoader's picks", "kiconfinder5 is missing (scripts/setup)",
                goal_text=F2_GOAL)
        return
    with mounted(c.db, BASES, theme="Adwaita", extra=["--rules", "kde"]) as mnt:
        cases = fidelity.kde_cases(fidelity_sample(mnt))
        rows_, counts = fidelity.measure("kde", cases, ORIGINAL, mnt)
    flat = sum(1 for _, v, *_ in rows_ if v.startswith("svg served as png"))
    row("F2", f"KIconLoader picking stock's source at the default size ({len(cases)})",
        [100 * fidelity.share(counts)], "%", goal=99, better="higher", judge="value",
        goal_text=F2_GOAL, note=", ".join(f"{k} {n}" for k, n in sorted(counts.items())))
    row("F2", "icons stock shows that the mount loses", [counts.get("lost", 0)], "", goal=0,
        judge="value", goal_text=F2_GOAL)
    row("F2", "SVGs KIconLoader gets as PNG (not recolourable)", [flat], "", goal=0,
        judge="value", goal_text=F2_GOAL)
    not_run("F2", "KIconLoader at 16, 22, 32, 48, 64",
            "not measured: kiconfinder5 asks the Desktop group's size only", goal_text=F2_GOAL)
