#!/usr/bin/env python3
"""The desktop's theme setting: which theme MNT/<N>/ serves without --theme
and following a switch live. GNOME's GSettings key is read through GIO's
keyfile backend (GSETTINGS_BACKEND=keyfile, XDG_CONFIG_HOME a temporary
directory): the user's value wins over GTK's settings.ini and KDE's
kdeglobals; without it those are read in that order; --theme pins. A switch
in GSettings or settings.ini shows in MNT/<N>/ within the design's second
(the latency is printed; the check's ceiling is generous)."""
import os
import re
import subprocess
import tempfile
import time

from common import (REAL_BASES, check, check_eq, counters, finish, mounted, need_theme, run,
                    shared_db, skip, write_atomic)

if not os.path.exists("/usr/share/glib-2.0/schemas/org.gnome.desktop.interface.gschema.xml"):
    skip("gsettings-desktop-schemas is not installed (run scripts/setup)")
need_theme("Papirus", "breeze", "Adwaita")
CEILING = 10.0
db = shared_db("real.sqlite")
run("index", "--db", db, "--icon-dirs", REAL_BASES, check_rc=0)


def gnome(conf, theme):
    write_atomic(os.path.join(conf, "glib-2.0", "settings", "keyfile"),
          f"[org/gnome/desktop/interface]\nicon-theme='{theme}'\n" if theme else "")


def served(mnt):
    return (os.getxattr(mnt, "user.iconfs.theme").decode(),
            os.getxattr(mnt, "user.iconfs.theme-source").decode())


def source_of(mnt, name):
    return os.getxattr(os.path.join(mnt, "48", name + ".png"), "user.iconfs.source").decode()


def switched(mnt, theme):
    """Seconds until MNT/48/ serves `theme` (a fresh name each time, and the
    same name looked up before the switch)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < CEILING:
        if served(mnt)[0] == theme and f"/{theme}/" in source_of(mnt, "folder"):
            return time.monotonic() - t0
        time.sleep(0.01)
    return None


with tempfile.TemporaryDirectory() as conf:
    env = dict(os.environ, GSETTINGS_BACKEND="keyfile", XDG_CONFIG_HOME=conf)
    os.environ.update(env)  # the daemon inherits them

    # the user's GSettings value wins over settings.ini
    gnome(conf, "Papirus")
    write_atomic(os.path.join(conf, "gtk-3.0", "settings.ini"), "[Settings]\ngtk-icon-theme-name=Adwaita\n")
    with mounted(db, REAL_BASES) as mnt:
        theme, source = served(mnt)
        check_eq(theme, "Papirus", "GSettings chooses the theme")
        check("GSettings" in source, f"and is named as the source: {source!r}")
        check("/Papirus/" in source_of(mnt, "folder"), "MNT/48 serves Papirus")
        status = run("status", "--db", db, mnt).stdout
        check("theme            Papirus (served; from GSettings" in status,
              f"iconfs status names the source: {status.splitlines()[2:3]}")

        # a switch in GSettings, live
        gnome(conf, "breeze")
        dt = switched(mnt, "breeze")
        print(f"GSettings switch Papirus -> breeze visible after "
              f"{dt * 1000 if dt is not None else -1:.0f} ms (goal <= 1 s)")
        check(dt is not None, "MNT/48 follows a GSettings switch")
        check(os.stat(os.path.join(mnt, "48", "folder.png")).st_size > 0, "and serves the file")

        # back to no GSettings value: settings.ini (GTK 3) decides
        gnome(conf, None)
        dt = switched(mnt, "Adwaita")
        print(f"GSettings value removed -> settings.ini's Adwaita after "
              f"{dt * 1000 if dt is not None else -1:.0f} ms")
        check(dt is not None, "without a GSettings value, settings.ini decides")
        check_eq(served(mnt)[1], "GTK settings.ini", "source is settings.ini")

        # a switch in settings.ini, live
        write_atomic(os.path.join(conf, "gtk-3.0", "settings.ini"), "[Settings]\ngtk-icon-theme-name=Papirus\n")
        dt = switched(mnt, "Papirus")
        print(f"settings.ini switch Adwaita -> Papirus visible after "
              f"{dt * 1000 if dt is not None else -1:.0f} ms (goal <= 1 s)")
        check(dt is not None, "MNT/48 follows a settings.ini switch")

    # GTK 4's settings.ini, then KDE's kdeglobals
    os.unlink(os.path.join(conf, "gtk-3.0", "settings.ini"))
    write_atomic(os.path.join(conf, "gtk-4.0", "settings.ini"), "[Settings]\ngtk-icon-theme-name=breeze\n")
    write_atomic(os.path.join(conf, "kdeglobals"), "[Icons]\nTheme=Adwaita\n")
    with mounted(db, REAL_BASES) as mnt:
        check_eq(served(mnt), ("breeze", "GTK settings.ini"), "GTK 4's settings.ini before kdeglobals")
    os.unlink(os.path.join(conf, "gtk-4.0", "settings.ini"))
    with mounted(db, REAL_BASES) as mnt:
        check_eq(served(mnt), ("Adwaita", "KDE kdeglobals"), "kdeglobals")
        # --theme pins: no following
    with mounted(db, REAL_BASES, theme="Papirus") as mnt:
        check_eq(served(mnt), ("Papirus", "--theme"), "--theme pins the theme")
        gnome(conf, "breeze")
        time.sleep(1.5)
        check_eq(served(mnt)[0], "Papirus", "a pinned theme does not follow GSettings")

    # `iconfs lookup` uses the same setting
    p = subprocess.run([os.environ["ICONFS"], "lookup", "--db", db, "--icon-dirs", REAL_BASES,
                        "folder", "48"], capture_output=True, text=True, env=env)
    check("/breeze/" in p.stdout, f"iconfs lookup follows GSettings: {p.stdout.strip()}")

    # the rules follow the session's desktop: KDE's under KDE, Qt's under
    # LXQt, GTK's anywhere else; --rules chooses; status and the xattr say
    for desktop, extra, want in (("KDE", [], "kde"), ("LXQt", [], "qt"),
                                 ("ubuntu:GNOME", [], "gtk"), ("KDE", ["--rules", "gtk"], "gtk")):
        os.environ["XDG_CURRENT_DESKTOP"] = desktop
        with mounted(db, REAL_BASES, theme="breeze", extra=extra) as mnt:
            check_eq(os.getxattr(mnt, "user.iconfs.rules").decode(), want,
                     f"XDG_CURRENT_DESKTOP={desktop} {' '.join(extra)}: the mount's rules")
            st = subprocess.run([os.environ["ICONFS"], "status", "--db", db, mnt],
                                capture_output=True, text=True)
            check(re.search(rf"^rules +{want} \(served\)$", st.stdout, re.M) is not None,
                  f"iconfs status says the rules: {st.stdout!r}")
    del os.environ["XDG_CURRENT_DESKTOP"]
    # KDE's group sizes reach KDE under its rules (breeze: DesktopDefault=48)
    os.environ["XDG_CURRENT_DESKTOP"] = "KDE"
    with mounted(db, REAL_BASES, theme="breeze") as mnt:
        with open(os.path.join(mnt, "icons", "breeze", "index.theme")) as f:
            text = f.read()
        check(re.search(r"^DesktopDefault=48$", text, re.M) is not None and
              "FollowsColorScheme=true" in text,
              "under kde the synthesized index.theme keeps KDE's keys")
    # KIconLoader reads its default theme, breeze, beside the user's: a KDE
    # user of Papirus finds both themes' files stored by the mount's start,
    # none built on the app's path (a fresh index: the blocks above stored
    # breeze's as a theme of their own)
    first = os.path.join(conf, "kde-first", "index.sqlite")
    os.makedirs(os.path.dirname(first))
    kconf = os.path.join(conf, "kde-config")
    write_atomic(os.path.join(kconf, "kdeglobals"), "[Icons]\nTheme=Papirus\n")
    with mounted(first, REAL_BASES, theme="Papirus") as mnt:
        kenv = dict(env, XDG_CONFIG_HOME=kconf, QT_QPA_PLATFORM="offscreen",
                    XDG_DATA_DIRS=f"{mnt}:/usr/share")
        p = subprocess.run(["kiconfinder5", "folder"], capture_output=True, text=True,
                           env=kenv, timeout=60)
        check(p.stdout.startswith(os.path.join(mnt, "icons", "Papirus") + "/"),
              f"kiconfinder5 finds Papirus's folder through the mount: {p.stdout.strip()}")
        check_eq(counters(mnt)["synth_builds"], 0,
                 "a KDE app's first start builds no synthesized file")
    del os.environ["XDG_CURRENT_DESKTOP"]
finish()
