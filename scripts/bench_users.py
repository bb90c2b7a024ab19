"""scripts/bench's figures of many users on one machine and one image on
many machines (#34): M1 (twenty first logins at once, as root:
tests/many_users.py), M2 (one user at rest), M3 (a long session), M4 (the
machine's layer), M5 (a layer copied to another machine's tree)
(bench_lib.py says how a figure declares its set-up)."""
import json
import os
import random
import resource
import shlex
import shutil
import subprocess
import time

from bench_lib import (BASES, ICONFS, PY, QUICK, ROOT, asuser, figure, mounted, not_run,
                       process_tree, provider, rss_kib, row)
from common import counters, daemons

G_M1 = ("M1 twenty simultaneous first-ever logins on this machine, with the machine-wide "
        "index and the layer present: every mount answers ≤ 2 s, using ≤ 0.2 CPU-s each")
G_M2 = ("M2 per user at rest: PSS of all the user's iconfs processes ≤ 8 MiB, "
        "disk ≤ 2 MiB")
G_M3 = ("M3 the long session above: the daemon's RssAnon ≤ 24 MiB at every point, "
        "and ≤ 5% growth over the second half")
G_M4 = ("M4 the layer for the 11 installed themes, built at installation: ≤ 64 MiB and "
        "≤ 30 CPU-s. A new user's first GTK app with the default theme still renders "
        "nothing (SH)")
G_M5 = "M5 a layer copied to another machine's tree serves with 0 renders"
USERS = 20
SIZES = [16, 22, 24, 32, 48, 64]


def _children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _layer_build(layer, env=None):
    """`iconfs render --shared-db layer` over the system's themes, as the
    package's service runs it; its CPU (with its render workers')."""
    t0 = _children_cpu()
    subprocess.run([ICONFS, "render", "--shared-db", layer, "--icon-dirs", BASES],
                   capture_output=True, check=True, env=env)
    return _children_cpu() - t0


# the service's environment: the machine's themes, not root's own ones
# (and dconf's cache, which the service's confinement keeps from being
# written, out of the unit's HOME: a /nonexistent made here fails test_cli)
SERVICE_ENV = dict(os.environ, HOME="/nonexistent", XDG_DATA_HOME="/nonexistent",
                   XDG_DATA_DIRS="/usr/local/share:/usr/share",
                   XDG_CACHE_HOME="/tmp/iconfs-bench-service-cache")


@provider("machine_layer")
def _machine_layer(c):
    """The layer as the package's service builds it at installation."""
    c.machine_layer = os.path.join(c.tmp, "machine", "shared.sqlite")
    os.makedirs(os.path.dirname(c.machine_layer))
    c.machine_layer_cpu = _layer_build(c.machine_layer, SERVICE_ENV)


@figure("M1")
def m1_first_logins(c):
    """M1: tests/many_users.py as root: the machine's layer, then twenty
    users' first `iconfs mount` at once, each as its own user."""
    out = os.path.join(c.tmp, "m1.json")
    cmd = (f"cd {shlex.quote(ROOT)} && ICONFS_TEST_AS_ROOT=1 timeout 900 {PY} "
           f"tests/many_users.py {shlex.quote(ICONFS)} {shlex.quote(out)} {USERS}")
    if not asuser.as_root("sh", "-c", cmd) or not os.path.exists(out):
        for what in ("every mount answers", "daemon CPU each"):
            not_run("M1", f"{USERS} first logins at once: {what}", "not run (needs root)",
                    goal_text=G_M1)
        return
    with open(out) as f:
        users = json.load(f)
    seeded = sum(1 for u in users if u[2])
    note = f"{seeded} of {len(users)} indexes layered over the machine's"
    worst = max(u[0] for u in users)
    row("M1", f"{USERS} first logins at once: until a mount answers",
        [u[0] for u in users], "s", goal=2.0, judge="value", goal_text=G_M1,
        met=worst <= 2.0, note=note + f"; the last after {worst:.2f} s")
    most = max(u[1] for u in users)
    row("M1", f"{USERS} first logins at once: daemon CPU each until then",
        [u[1] for u in users], "s", goal=0.2, judge="value", goal_text=G_M1,
        met=most <= 0.2, note=f"the most {most:.2f} s")


def pss_kib(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            return next(int(ln.split()[1]) for ln in f if ln.startswith("Pss:"))
    except (OSError, StopIteration):
        return 0


def disk_bytes(db):
    return sum(os.path.getsize(db + s) for s in ("", "-wal", "-shm", ".lock")
               if os.path.exists(db + s))


@figure("M2", needs=("native", "samples", "machine_layer"))
def m2_at_rest(c):
    """M2: a user's logins on a machine with its layer (as the package's
    service builds it at installation): a mount of a new index, a GTK app's
    300 Papirus icons read through it (rendered into the user's own table:
    Papirus is not the default theme), then 10 s of rest: the PSS of every
    iconfs process of the mount (daemon, guard, helpers, every process the
    daemon started: render workers; run as the login's unit runs it, with
    systemd's watchdog and so its pinger) and the index's files; then the same
    after the service's next run took in what the mount asked for (a
    second login)."""
    d = os.path.join(c.tmp, "m2")
    os.makedirs(d)
    layer = os.path.join(d, "shared.sqlite")
    shutil.copy(c.machine_layer, layer)
    os.chmod(layer, 0o644)
    os.mkdir(os.path.join(d, "requests"))
    os.chmod(os.path.join(d, "requests"), 0o1733)  # as the service makes it
    db = os.path.join(d, "index.sqlite")
    for session in ("first login", "after the layer took it in"):
        if session != "first login":
            _layer_build(layer, SERVICE_ENV)
        pss, anon, renders = _m2_session(c, db, layer)
        row("M2", f"at rest, {session}: PSS of the user's iconfs processes", [pss], "MiB",
            goal=8.0, judge="value", goal_text=G_M2,
            note=f"the daemon's RssAnon {anon:.1f} MiB")
        row("M2", f"at rest, {session}: disk (index, WAL, shm, lock)",
            [disk_bytes(db) / 2**20], "MiB", goal=2.0, judge="value", goal_text=G_M2,
            note=f"layered over the machine's index; {renders} renders")


def _m2_session(c, db, layer):
    """As the login's unit runs the mount: with systemd's watchdog (its
    WatchdogSec=30), whose pinger lives as long as the mount (mounted()
    gives the daemon its $NOTIFY_SOCKET)."""
    return _m2_measure(c, db, layer, dict(os.environ, WATCHDOG_USEC="30000000"))


def _m2_measure(c, db, layer, env):
    from bench_lib import gtk
    with mounted(db, BASES, theme="Papirus", extra=("--shared-db", layer), env=env) as m:
        gtk("load", "Papirus", 48, c.names300, f"{m}:/usr/share")
        # at rest: past the render workers' idle time (RENDER_IDLE_MS)
        time.sleep(10)
        pids = daemons(m) + [int(p) for p in os.listdir("/proc") if p.isdigit()
                             and _is_helper(p, m)] + process_tree(mounted.pid)
        pss = sum(pss_kib(p) for p in set(pids)) / 1024
        anon = rss_kib(mounted.pid)[1] / 1024
        renders = counters(m)["renders"]
    return pss, anon, renders


def _is_helper(pid, mnt):
    """An iconfs helper of the mount at `mnt` (guard, read ahead, the
    watchdog's pinger)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return False
    return (os.path.basename(argv[0]) in (b"iconfs", b"iconfs-guard", b"iconfs-helper")
            and mnt.encode() in argv)


@figure("M3", needs=("index",))
def m3_long_session(c):
    """M3: random stats and reads over 20,000 Papirus names at 6 sizes
    (600,000 over 120,000 paths; --quick: 150,000 over 30,000), the
    daemon's RssAnon at 50k, 100k, 300k and 600k operations."""
    names = sorted({f[:-4] for d in ("apps", "mimetypes", "places", "devices", "status",
                                     "actions")
                    for f in os.listdir(f"/usr/share/icons/Papirus/48x48/{d}")
                    if f.endswith(".svg")})
    rng = random.Random(34)
    n_names, ops = (5000, 150000) if QUICK else (20000, 600000)
    names = rng.sample(names, min(n_names, len(names)))
    marks = [ops * k // 12 for k in (1, 2, 6, 12)]  # 50k, 100k, 300k, 600k
    seen = {}
    with mounted(c.db, BASES, theme="Papirus") as m:
        paths = [f"{m}/icons/Papirus/{s}x{s}/{n}.png" for n in names for s in SIZES]
        for i in range(1, ops + 1):
            p = rng.choice(paths)
            try:
                if i % 2:
                    os.stat(p)
                else:
                    with open(p, "rb") as f:
                        f.read()
            except OSError:
                pass
            if i in marks:
                seen[i] = rss_kib(mounted.pid)[1] / 1024
        end = counters(m)
    values = [seen[k] for k in marks]
    growth = (values[-1] / values[-2] - 1) * 100
    row("M3", f"long session: the daemon's RssAnon, the most of {len(marks)} points",
        [max(values)], "MiB", goal=24.0, judge="value", goal_text=G_M3,
        note=" ".join(f"{k // 1000}k:{v:.1f}" for k, v in seen.items()) +
        f" MiB; {len(paths)} paths; at the end {end['nodes']} nodes, "
        f"heap {end['heap_in_use'] / 2**20:.1f} MiB in use, {end['heap_free'] / 2**20:.1f} free")
    row("M3", "long session: RssAnon growth over the second half", [growth], "%",
        goal=5.0, judge="value", goal_text=G_M3)


@figure("M4", needs=("desktop", "samples", "machine_layer"))
def m4_layer(c):
    """M4: the layer as the package's service builds it at installation
    (the index of every installed theme, the machine's default theme at the
    common sizes; the service's environment: the machine's themes, the
    default theme's setting as root sees it), then a new user's first GTK
    app with that theme through a mount reading it; then a week of use by
    twenty users, simulated: each asks for what its mount rendered (a theme
    of its own among the installed ones, the bench's 300 names at three
    sizes), and the service takes the requests in."""
    from bench_apps import APPS, STOCK_DIRS
    themes = sorted(t for t in os.listdir("/usr/share/icons")
                    if os.path.exists(f"/usr/share/icons/{t}/index.theme"))
    layer, cpu = c.machine_layer, c.machine_layer_cpu
    os.makedirs(os.path.join(c.tmp, "m4"))
    size = os.path.getsize(layer) / 2**20
    row("M4", f"the layer at installation ({len(themes)} themes): its file", [size], "MiB",
        goal=64.0, judge="value", goal_text=G_M4,
        note="the index of every theme and the default theme's renders; "
             "840 MiB when it rendered every theme")
    row("M4", "the layer at installation: its build's CPU", [cpu], "s", goal=30.0,
        judge="value", goal_text=G_M4, note="205 CPU-s when it rendered every theme")
    default = subprocess.run(["gsettings", "get", "org.gnome.desktop.interface", "icon-theme"],
                             capture_output=True, text=True).stdout.strip().strip("'") or "hicolor"
    desk = c.apps.desk
    desk.set_theme(default)
    label, tk, argv = APPS[0]
    renders = {}
    for how, extra in (("with", ("--shared-db", layer)), ("without", ())):
        db = os.path.join(c.tmp, "m4", f"new-user-{how}.sqlite")
        with mounted(db, BASES, theme=default, extra=extra) as m:
            desk.start(tk, argv, f"{m}:{STOCK_DIRS}")
            renders[how] = counters(m)["renders"]
    row("M4", f"a new user's first GTK app ({label}, {default}) through it: renders",
        [renders["with"]], "", goal=0, judge="value", goal_text=G_M4,
        note=f"{renders['without']} without the layer")
    _m4_week(c, layer, themes, SERVICE_ENV)


def _m4_week(c, layer, themes, env):
    """Twenty users' requests, each for a theme of its own at 16, 24 and
    48 px (what its mount rendered of the bench's 300 names), taken in."""
    rnd = random.Random(34)
    requests = os.path.join(os.path.dirname(layer), "requests")
    for u in range(USERS):
        theme = rnd.choice(themes)
        db = os.path.join(c.tmp, "m4", f"week-{u}.sqlite")
        with mounted(db, BASES, theme=theme, extra=("--shared-db", layer)) as m:
            for size in (16, 24, 48):
                for n in c.names300:
                    try:
                        with open(f"{m}/icons/{theme}/{size}x{size}/{n}.png", "rb") as f:
                            f.read()
                    except OSError:
                        pass
    asked = len(os.listdir(requests)) if os.path.isdir(requests) else 0
    cpu = _layer_build(layer, env)
    size = os.path.getsize(layer) / 2**20
    row("M4", f"after a week of {USERS} users (simulated): the layer's file", [size], "MiB",
        goal=64.0, judge="value", goal_text=G_M4,
        note=f"{asked} request files taken in, in {cpu:.1f} CPU-s")


@figure("M5", needs=("samples",))
def m5_travelling_layer(c):
    """M5: a layer built for a copy of Papirus (48 px), the copy then
    copied again file by file (cp -a: other inodes, the same size, mtime
    and bytes) to the same place: a new user's mount reads 300 icons."""
    icons = os.path.join(c.tmp, "m5", "icons")
    tree = os.path.join(icons, "Papirus")
    os.makedirs(icons)
    subprocess.run(["cp", "-a", "/usr/share/icons/Papirus", tree], check=True)
    layer = os.path.join(c.tmp, "m5", "shared.sqlite")
    subprocess.run([ICONFS, "render", "--shared-db", layer, "--icon-dirs", icons,
                    "--theme", "Papirus", "--sizes", "48"], capture_output=True, check=True)
    os.rename(tree, tree + ".built")
    subprocess.run(["cp", "-a", tree + ".built", tree], check=True)
    shutil.rmtree(tree + ".built")
    db = os.path.join(c.tmp, "m5", "index.sqlite")
    with mounted(db, icons, theme="Papirus", extra=("--shared-db", layer)) as m:
        for n in c.names300:
            with open(f"{m}/icons/Papirus/48x48/{n}.png", "rb") as f:
                f.read()
        got = counters(m)
    row("M5", "a layer copied with cp -a (other inodes): renders for 300 icons",
        [got["renders"]], "", goal=0, judge="value", goal_text=G_M5,
        met=got["renders"] == 0, note=f"{got['shared_hits']} from the layer")
    shutil.rmtree(os.path.join(c.tmp, "m5"), ignore_errors=True)
