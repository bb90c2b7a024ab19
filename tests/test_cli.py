#!/usr/bin/env python3
"""The command line as a user meets it: each command's own help and
options (one that does not apply is refused), the exit codes (0 success,
1 failure at run time, 2 usage) the same in every command, and a clear
message naming the cause for each mistake a user makes: a missing operand,
an unknown theme, a missing icon directory, a read-only index directory,
umount of what is not an iconfs mount, status of a non-mount. lookup with
other icon directories leaves the user's index alone; mount --budget is
the mount's cap."""
import os
import re
import subprocess
import tempfile
import time

from common import ICONFS, check, check_eq, counters, finish, mounted, squares_theme

VERSION = "0.1.0"


def iconfs(*args, env=None):
    p = subprocess.run([ICONFS, *args], capture_output=True, text=True, env=env, timeout=120)
    return p.returncode, p.stdout, p.stderr.strip()


with tempfile.TemporaryDirectory() as tmp:
    base = os.path.join(tmp, "icons")
    squares_theme(base, "sq", 3)
    squares_theme(base, "other", 1)
    db = os.path.join(tmp, "index.sqlite")
    # the user's own cache, index and settings live in this test's home
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache"),
               XDG_CONFIG_HOME=os.path.join(tmp, "config"), GSETTINGS_BACKEND="memory")

    # --- usage errors: exit 2 and one line naming the mistake
    for args, err in [
        (["lookup", "firefox"],
         "iconfs: 'iconfs lookup' takes NAME SIZE, or --batch and no operands"),
        (["mount", "--sizes", "48", "--budget", "5", "--batch"],
         "iconfs: option '--sizes' does not apply to 'iconfs mount'\n"
         "see 'iconfs mount --help'"),
        (["index", "--theme", "sq"],
         "iconfs: option '--theme' does not apply to 'iconfs index'\nsee 'iconfs index --help'"),
        (["status", "-f"],
         "iconfs: option '-f' does not apply to 'iconfs status'\nsee 'iconfs status --help'"),
        (["frobnicate"], "iconfs: unknown command 'frobnicate' (see 'iconfs help')"),
        (["lookup", "--bogus", "x", "1"],
         "iconfs: unknown option '--bogus'\nsee 'iconfs lookup --help'"),
        (["lookup", "x", "1", "--db"],
         "iconfs: option '--db' needs a value\nsee 'iconfs lookup --help'"),
        (["lookup", "--scale", "9", "x", "1"], "iconfs: invalid scale '9' (1 to 3)"),
        (["lookup", "x", "huge"], "iconfs: invalid size 'huge' (1 to 65536)"),
        (["umount", "a", "b"],
         "iconfs: 'iconfs umount' takes [MOUNTPOINT]\nsee 'iconfs umount --help'"),
        (["index", "extra"],
         "iconfs: 'iconfs index' takes no operands\nsee 'iconfs index --help'"),
        (["render", "--theme", "sq", "--all-themes"],
         "iconfs: --theme and --all-themes exclude each other"),
        (["help", "nosuch"], "iconfs: unknown command 'nosuch' (see 'iconfs help')"),
        (["lookup", "--rules", "gnome", "x", "1"],
         "iconfs: invalid rules 'gnome' (gtk, kde, qt or spec)"),
        (["status", "--rules", "kde"],
         "iconfs: option '--rules' does not apply to 'iconfs status'\n"
         "see 'iconfs status --help'"),
    ]:
        rc, out, got = iconfs(*args, env=env)
        check_eq((rc, got), (2, err), f"iconfs {' '.join(args)}")

    # an unknown theme lists the installed ones: an error where it would
    # be served or rendered; lookup follows the specification (hicolor)
    rc, out, err = iconfs("lookup", "--db", db, "--icon-dirs", base, "--theme", "NoSuchTheme",
                          "sq-00", "16", env=env)
    check_eq((rc, out, err.splitlines()[-1:]),
             (1, "", ["iconfs: unknown theme 'NoSuchTheme' (installed: other, sq): looked up as "
                      "the specification says, in hicolor"]), "unknown theme in lookup: a warning")
    for cmd in (["render", "--db", db, "--icon-dirs", base, "--theme", "NoSuchTheme",
                 "--sizes", "16"],
                ["mount", "-f", "--db", db, "--icon-dirs", base, "--theme", "NoSuchTheme",
                 os.path.join(tmp, "never")]):
        rc, out, err = iconfs(*cmd, env=env)
        check_eq((rc, err.splitlines()[-1:]),
                 (2, ["iconfs: unknown theme 'NoSuchTheme'; installed: other, sq"]),
                 f"unknown theme in {cmd[0]}")

    # --- help and version
    rc, out, err = iconfs("--version")
    check_eq((rc, out, err), (0, f"iconfs {VERSION}\n", ""), "--version")
    check_eq(iconfs("-V")[:2], (0, f"iconfs {VERSION}\n"), "-V")
    rc, out, err = iconfs("help")
    check(rc == 0 and all(f"  {c} " in out for c in
                          ("index", "lookup", "mount", "render", "status", "umount", "help"))
          and "mount-guard" not in out and "watchdog-ping" not in out,
          f"iconfs help lists the user's commands only: {out!r}")
    check_eq(iconfs("help", "mount")[:2], iconfs("mount", "--help")[:2],
             "iconfs help mount is mount --help")
    own = {"index": ["--db", "--icon-dirs"],
           "lookup": ["--db", "--icon-dirs", "--theme", "--scale", "--batch", "--rules"],
           "mount": ["--db", "--shared-db", "--no-shared-db", "--icon-dirs", "--theme",
                     "--workers", "--budget", "-f", "--rules"],
           "render": ["--db", "--shared-db", "--icon-dirs", "--theme", "--all-themes",
                      "--sizes", "--scales", "--budget", "--workers", "--rules"],
           "status": ["--db", "--shared-db", "--no-shared-db"],
           "umount": []}
    every = sorted({o for opts in own.values() for o in opts})
    for cmd, opts in own.items():
        rc, out, err = iconfs(cmd, "--help")
        listed = [o for o in every if re.search(rf"^  {re.escape(o.strip())}[ ,]", out, re.M)]
        check_eq((rc, out.splitlines()[0].split()[:3], sorted(listed)),
                 (0, ["usage:", "iconfs", cmd], sorted(opts)),
                 f"{cmd} --help shows its own options")

    # --- run-time failures: exit 1, naming the cause
    ro = os.path.join(tmp, "ro")
    os.mkdir(ro, 0o555)
    rc, out, err = iconfs("index", "--db", os.path.join(ro, "index.sqlite"), "--icon-dirs", base)
    check_eq((rc, err), (1, f"iconfs: cannot create index '{ro}/index.sqlite': Permission denied"),
             "--db in a read-only directory")

    rc, out, err = iconfs("index", "--db", db, "--icon-dirs", f"{base}:/nonexistent")
    check_eq((rc, err.splitlines()[:1]),
             (0, ["iconfs: icon directory '/nonexistent' is not a directory: "
                  "nothing is indexed from it"]),
             "a missing icon directory is a warning")

    plain = os.path.join(tmp, "plain")
    os.mkdir(plain)
    t0 = time.monotonic()
    rc, out, err = iconfs("umount", plain)
    took = time.monotonic() - t0
    check_eq((rc, err), (1, f"iconfs: '{plain}' is not mounted"), "umount of a plain directory")
    check(took < 1, f"says so at once ({took:.2f} s)")
    rc, out, err = iconfs("umount", "/proc")
    check_eq((rc, err), (1, "iconfs: '/proc' is not an iconfs mount of this user: left alone"),
             "umount of another filesystem")
    rc, out, err = iconfs("status", "--db", db, "/nope")
    check_eq((rc, out.splitlines()[-1:]), (1, ["mountpoint       /nope (not mounted)"]),
             "status of a non-mount")

    # lookup with other directories never rewrites the user's index
    rc, out, err = iconfs("index", "--icon-dirs", base, env=env)
    check_eq(rc, 0, f"the user's index ({err})")
    user_db = os.path.join(tmp, "cache", "iconfs", "index.sqlite")
    themes = lambda: next(l.split()[1] for l in iconfs("status", "--db", user_db)[1].splitlines()
                          if l.startswith("themes "))
    check_eq(themes(), "2", "the user's index holds sq and other")
    empty = os.path.join(tmp, "empty")
    os.mkdir(empty)
    rc, out, err = iconfs("lookup", "--icon-dirs", empty, "sq-00", "16", env=env)
    check_eq((rc, out), (1, ""), "nothing resolves in an empty directory")
    check_eq(themes(), "2", "and the user's index is untouched")
    check_eq([f for f in os.listdir(tempfile.gettempdir()) if f.startswith("iconfs-lookup-")],
             [], "the scratch index is gone")
    rc, out, err = iconfs("lookup", "--icon-dirs", base, "--theme", "sq", "sq-01", "16", env=env)
    check_eq((rc, out), (0, os.path.join(base, "sq", "scalable", "sq-01.svg") + "\n"),
             "lookup through other directories")

    # --- mount --budget is the mount's cap, and status shows it
    with mounted(db, base, theme="sq", extra=("--budget", "5")) as mnt:
        check_eq(counters(mnt)["budget_mib"], 5, "mount --budget 5: a 5 MiB cap")
        rc, out, err = iconfs("status", "--db", db, mnt)
        check_eq((rc, [l for l in out.splitlines() if "budget_mib" in l]),
                 (0, ["  budget_mib     5"]), "status shows the cap")
    with mounted(db, base, theme="sq") as mnt:
        check_eq(counters(mnt)["budget_mib"], 512, "the default cap is 512 MiB")
        # the man page lists every counter the mount shows, in its order:
        # both are made from one table (fs/counters.h)
        with open(os.path.join(os.path.dirname(ICONFS), "..", "docs",
                               "iconfs.1.scd")) as f:
            page = f.read().split("*user.iconfs.counters*", 1)[1]
        listed = re.findall(r"^\t- \*(\w+)\*: ", page.split("\n# ", 1)[0], re.M)
        check_eq(listed, list(counters(mnt)), "the man page's counters are the mount's")
        check("renders" in listed and "lookups" in listed, "among them lookups and renders")
finish()
