#!/usr/bin/env python3
"""A user at rest, against the budgets of bench M2: a first login over the
machine's layer (built as the package's service builds it: the
machine-wide index, the default theme's renders) with a theme whose
renders the layer does not hold (Papirus: they go to the user's own
index), run as the login's unit runs it (with systemd's watchdog, and so
its pinger); a GTK 3 client loads 300 Papirus icons through the mount,
rendered for the user. After 10 s of rest (past the render workers' idle
time), the PSS of every iconfs process of the mount is at most 8 MiB and
the index's files take at most 2 MiB (an ASan build's PSS is not judged:
its shadow memory counts)."""
import os
import random
import shutil
import subprocess
import tempfile
import time

from common import (REAL_BASES, SANITIZED, check, check_eq, cmdline_of, counters, finish,
                    is_symbolic, mounted, need_theme, run, skip)

need_theme("Papirus", "hicolor")
PY = "/usr/bin/python3"
if not os.path.exists(PY) or not shutil.which("xvfb-run"):
    skip("Debian's python3 and xvfb-run are needed (run scripts/setup)")
CLIENTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "clients.py")
PSS_MIB, DISK_MIB = 8, 2


def pss_kib(pid):
    with open(f"/proc/{pid}/smaps_rollup") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("Pss:"))


def mount_processes(mnt, daemon):
    """The mount's processes: pid -> program name. Its helpers (guard, read
    ahead, the watchdog's pinger) name the mountpoint; its render workers and
    other children descend from the daemon. Other mounts of the same user
    (tests running beside this one) are not counted."""
    parents, names = {}, {}
    for pid in map(int, filter(str.isdigit, os.listdir("/proc"))):
        try:
            with open(f"/proc/{pid}/stat") as f:
                parents[pid] = int(f.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        argv = cmdline_of(pid)
        if argv and argv[0]:
            names[pid] = (os.path.basename(argv[0]).decode(), mnt.encode() in argv)

    def below_daemon(pid):
        while pid > 1:
            if pid == daemon:
                return True
            pid = parents.get(pid, 0)
        return False

    return {pid: name for pid, (name, names_mnt) in names.items()
            if name.startswith("iconfs") and (names_mnt or below_daemon(pid))}


tmp = tempfile.mkdtemp(prefix="iconfs-rest-")
try:
    layer = os.path.join(tmp, "shared.sqlite")
    # the service's environment: the machine's themes, not a user's own ones
    service = dict(os.environ, HOME="/nonexistent", XDG_DATA_HOME="/nonexistent")
    p = run("render", "--shared-db", layer, "--icon-dirs", REAL_BASES, env=service)
    check_eq(p.returncode, 0, f"the machine's layer is built ({p.stderr.strip()})")
    apps = sorted(f[:-4] for f in os.listdir("/usr/share/icons/Papirus/48x48/apps")
                  if f.endswith(".svg") and not is_symbolic(f[:-4]))
    names = random.Random(1130).sample(apps, 300)
    db = os.path.join(tmp, "index.sqlite")
    # systemd's watchdog (mounted() gives the daemon its $NOTIFY_SOCKET)
    env = dict(os.environ, WATCHDOG_USEC="30000000")
    # meson's, which makes glibc write every freed chunk (its pages then
    # resident); a login has none
    env.pop("MALLOC_PERTURB_", None)
    with mounted(db, REAL_BASES, theme="Papirus", extra=("--shared-db", layer),
                 env=env) as mnt:
        genv = dict(os.environ, XDG_DATA_DIRS=f"{mnt}:/usr/share")
        genv.pop("PYTHONPATH", None)
        p = subprocess.run(["xvfb-run", "-a", PY, CLIENTS, "gtk3", "Papirus", "48", *names],
                           capture_output=True, text=True, env=genv, timeout=240)
        check_eq(p.returncode, 0, f"the GTK 3 client loads them ({p.stderr[-400:]})")
        loaded = [line.split("\t") for line in p.stdout.splitlines()]
        through = [f for f in loaded if len(f) > 2 and f[1].startswith(mnt) and f[2] == "48x48"]
        check_eq(len(through), len(names), "every icon loads from the mount at 48x48")
        renders = counters(mnt)["renders"]
        check(renders >= len(names) // 2, f"the user's mount rendered them ({renders})")
        time.sleep(10)  # at rest
        procs = mount_processes(mnt, mounted.pid)
        pss = sum(pss_kib(pid) for pid in procs) / 1024
        disk = sum(os.path.getsize(db + s) for s in ("", "-wal", "-shm", ".lock")
                   if os.path.exists(db + s)) / 2**20
    print(f"at rest: {sorted(procs.values())}: {pss:.2f} MiB of PSS; index files {disk:.2f} MiB")
    check(mounted.pid in procs and "iconfs-helper" in procs.values(),
          f"the daemon and the watchdog's pinger are counted ({sorted(procs.values())})")
    if SANITIZED:  # ASan's shadow memory and quarantine are most of it
        print(f"an ASan build: its PSS is not judged against {PSS_MIB} MiB")
    else:
        check(pss <= PSS_MIB,
              f"the user's iconfs processes at rest: {pss:.2f} <= {PSS_MIB} MiB of PSS")
    check(disk <= DISK_MIB, f"the user's index files at rest: {disk:.2f} <= {DISK_MIB} MiB")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
finish()
