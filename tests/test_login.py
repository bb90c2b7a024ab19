#!/usr/bin/env python3
"""A real login, with iconfs installed as a distribution installs it: a
booted Debian 12 container (systemd as its PID 1), the iconfs package
built from this tree (scripts/package: dpkg-buildpackage and lintian)
and installed in the running box with `dpkg -i` before a lingering user
(alice, uid 1000) gets her manager at boot. Nothing enables the user unit
but the package.

The box is a pristine debootstrap of the packages below and the
package's dependencies, cached under the build directory
(tests/debootstrap.py: rebuilt when the list changes, built in a
temporary directory and renamed when complete); each run boots a fresh
overlay of it in a mount namespace of its own, so nothing of a run
outlives it. A driver inside the box (tests/login/driver.py) measures,
as the user and in the user's session; this side judges:

 1. the mount answers within 5 s of the user manager's start;
 2. the session's environment has the mount first in XDG_DATA_DIRS;
 3. GTK 3 started in the session takes Adwaita's icons from the mount;
 4. after kill -9 of the daemon a working mount is back within 3 s;
 5. after SIGSTOP (a hang) one is back within WatchdogSec + 5 s;
 6. `systemctl --user stop iconfs.service` leaves no mount;
 7. a change of GNOME's icon-theme setting is followed within 1 s;
 8. the daemon's messages are in `journalctl --user -u iconfs`;
 9. the package built in a clean debootstrap chroot of its Build-Depends
    (`scripts/package --chroot`), its unit tests run there and passed, no
    lintian error; `dpkg -i` installed it and enabled the user unit for
    every user and the shared layer's path unit;
10. the installation started the shared layer's build without making dpkg
    wait, and the confined iconfs-shared.service made
    /var/cache/iconfs/shared.sqlite (root's, 0644) that the user's
    `iconfs status` takes; tests/login/check-shared.sh passes;
11. a theme package (built here with dpkg-deb) installed with `dpkg -i`
    refreshes the layer through the dpkg trigger (the path unit stopped
    meanwhile): the service ran again and the layer's index has the
    theme's icon (rendered once users ask for it: the layer is sized by use);
12. purging the theme package refreshes the layer without it;
13. `dpkg -i` of the package again (an upgrade's configure) starts the
    layer's build again and leaves the user's running mount alone;
14. last, after the user's unit is stopped: `apt-get purge iconfs` leaves
    nothing behind (files, units, enablement links, /var/cache/iconfs,
    dpkg's records and trigger interest).

Needs root (a booted container) and the packaging tools (scripts/setup);
skipped only without root or /dev/fuse.
The box's /dev/fuse is the host's, bound in and set to 0666 as Debian's
udev rule makes it. On a host with cgroup v1 controllers and v2 beside
them (hybrid) the box gets the v2 hierarchy, as Debian 12 boots. On a
failure the box's console, journal and the unit's status are printed;
ICONFS_KEEP_BOX=1 keeps the run's directory (overlay, results) for a look.
The figures of 4 and 5 are printed for scripts/bench as
`K1 kill=SECONDS hang=SECONDS watchdog=SECONDS` ("none": not measured).
"""
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

# a booted container needs root: common.py must not drop to the test user
os.environ.setdefault("ICONFS_TEST_AS_ROOT", "1")
import common  # noqa: E402
import debootstrap  # noqa: E402
from common import check, finish, skip  # noqa: E402
from debootstrap import remove_tree  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
LOGIN = os.path.join(HERE, "login")
PACKAGE = os.path.join(HERE, "..", "scripts", "package")
ICONFS = os.path.abspath(os.environ.get("ICONFS") or
                         os.path.join(HERE, "..", "build", "cli", "iconfs"))
BUILD = os.path.dirname(os.path.dirname(ICONFS))
TEST_DIR = os.path.abspath(os.environ.get("ICONFS_TEST_DIR") or os.path.join(BUILD, "tests"))
BOX = os.path.join(TEST_DIR, "login-box")
DEBS_IN_BOX = "var/tmp/iconfs-login"  # nspawn mounts a tmpfs on /tmp
TEST_THEME = "iconfs-test-theme"
LAYER = "/var/cache/iconfs/shared.sqlite"
SHARED_PATH = "iconfs-shared.path"
USER, UID = "alice", 1000
MNT = f"/run/user/{UID}/iconfs"
BOOT_TIMEOUT = 480  # the whole boot, checks and poweroff

# the box: a login (systemd, logind, a session bus), FUSE, the session's
# settings (dconf, gsettings), GTK 3 with the themes it looks up; the
# package's own dependencies are added from its Depends (box_packages):
# `dpkg -i` in the box, offline, finds them installed
PACKAGES = """
    systemd systemd-sysv dbus dbus-user-session libpam-systemd fuse3
    python3 python3-gi gir1.2-gtk-3.0 adwaita-icon-theme hicolor-icon-theme
    dconf-gsettings-backend dconf-service gsettings-desktop-schemas libglib2.0-bin
    librsvg2-common
""".split()


def say(*args):
    print(*args, flush=True)


# ---------------------------------------------------------------- the image

def box_packages(deb):
    """PACKAGES and the iconfs package's dependencies (the first of each
    alternative, without versions)."""
    depends = sh("dpkg-deb", "-f", deb, "Depends", "Pre-Depends")
    pkgs = set(PACKAGES)
    for field in depends.splitlines():
        field = field.split(":", 1)[1] if re.match(r"^[\w-]+:\s", field) else field
        pkgs.update(debootstrap.dep_names(field))
    return sorted(pkgs)


def ensure_image(lock, deb):
    """The cached pristine root of the box, with the dependencies of the
    package `deb`; (path, seconds spent building). Built under an exclusive
    lock on `lock`, which is left shared: a run that uses the image keeps
    another from rebuilding it under it (debootstrap.py)."""
    return debootstrap.ensure(BOX, box_packages(deb), lock, "the login box")


# ---------------------------------------------------------------- the packages

def build_package(outdir):
    """scripts/package --chroot OUTDIR (the run's own directory: a run
    beside it builds its own), in the clean build chroot: (the iconfs .deb,
    seconds, exit status, lintian's verdict, scripts/package's output)."""
    t0 = time.monotonic()
    # a process group of its own: an interrupted run ends all of it (TERM
    # first: scripts/package removes its temporary tree)
    p = subprocess.Popen([PACKAGE, "--chroot", outdir], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        stdout, stderr = p.communicate()
    except BaseException:
        os.killpg(p.pid, signal.SIGTERM)
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        raise
    took = time.monotonic() - t0
    out = stdout + stderr
    debs = [l.strip() for l in stdout.splitlines()
            if l.strip().endswith(".deb") and os.path.basename(l.strip()).startswith("iconfs_")]
    tags = re.findall(r"^([EWIO]): iconfs", out, re.M)
    verdict = (f"lintian: {tags.count('E')} errors, {tags.count('W')} warnings, "
               f"{tags.count('O')} overridden")
    if len(debs) != 1:
        errors = [l for l in out.splitlines() if re.search(r"error|^E: ", l, re.I)]
        raise AssertionError(f"scripts/package {outdir} exited {p.returncode} without one "
                             f"iconfs .deb ({debs}): the package of this work tree does not "
                             f"build:\n" + "\n".join(errors[-20:]) + "\n...\n" + out[-1500:])
    return debs[0], took, p.returncode, verdict, out


def make_theme_deb(outdir):
    """A theme package of one scalable icon: /usr/share/icons/TEST_THEME
    with its index.theme and scalable/x.svg, built with dpkg-deb."""
    top = os.path.join(outdir, "theme-pkg")
    os.makedirs(os.path.join(top, "DEBIAN"))
    theme = os.path.join(top, "usr/share/icons", TEST_THEME)
    os.makedirs(os.path.join(theme, "scalable"))
    with open(os.path.join(top, "DEBIAN/control"), "w") as f:
        f.write(f"Package: {TEST_THEME}\nVersion: 1.0\nArchitecture: all\n"
                "Maintainer: iconfs tests <tests@iconfs.invalid>\nSection: graphics\n"
                "Priority: optional\nDescription: a theme of one icon for tests/test_login.py\n"
                " Installed in the login box to check that the dpkg trigger of iconfs\n"
                " refreshes the shared layer.\n")
    with open(os.path.join(theme, "index.theme"), "w") as f:
        f.write("[Icon Theme]\nName=iconfs test theme\nComment=one icon, for tests\n"
                "Inherits=hicolor\nDirectories=scalable\n\n"
                "[scalable]\nSize=48\nMinSize=8\nMaxSize=512\nType=Scalable\n")
    with open(os.path.join(theme, "scalable", "x.svg"), "w") as f:
        f.write('<svg xmlns="http://www.w3.org/2000/svg" width="48" height="48" '
                'viewBox="0 0 48 48"><rect x="4" y="4" width="40" height="40" rx="6" '
                'fill="#3465a4"/><circle cx="24" cy="24" r="10" fill="#fce94f"/></svg>\n')
    for d, dirs, files in os.walk(top):
        os.chmod(d, 0o755)
        for n in files:
            os.chmod(os.path.join(d, n), 0o644)
    deb = os.path.join(outdir, f"{TEST_THEME}_1.0_all.deb")
    sh("dpkg-deb", "--root-owner-group", "--build", top, deb)
    remove_tree(top)
    return deb


# ---------------------------------------------------------------- one boot

def sh(*argv):
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} exited {p.returncode}: "
                             f"{(p.stdout + p.stderr)[-2000:]}")
    return p.stdout


def prepare(root, work):
    """The packages (work/debs) where the box installs them from, the
    lingering user, the test's units; nothing of iconfs itself: the box
    installs the package (iconfs-login-install.service)."""
    debs = os.path.join(root, DEBS_IN_BOX)
    os.makedirs(debs, exist_ok=True)
    for e in sorted(os.listdir(os.path.join(work, "debs"))):
        shutil.copy(os.path.join(work, "debs", e), os.path.join(debs, e))
    sh("useradd", "--root", root, "--uid", str(UID), "--user-group", "--create-home",
       "--shell", "/bin/bash", USER)
    os.makedirs(os.path.join(root, "var/lib/systemd/linger"), exist_ok=True)
    open(os.path.join(root, "var/lib/systemd/linger", USER), "w").close()
    os.makedirs(os.path.join(root, "var/log/journal"), exist_ok=True)
    units = ("iconfs-login-fuse.service", "iconfs-login-install.service",
             "iconfs-login-check.service")
    for unit in units:
        shutil.copy(os.path.join(LOGIN, unit), os.path.join(root, "etc/systemd/system", unit))
    sh("systemctl", f"--root={root}", "enable", *units)
    with open(os.path.join(root, "etc/hostname"), "w") as f:  # debootstrap copied the host's
        f.write("iconfsbox\n")


def boot(work):
    """In a mount namespace of its own (unshare): a fresh overlay of the
    cached image, the packages put into it, then exec the booted container."""
    root = os.path.join(work, "root")
    for d in ("upper", "work", "root"):
        os.makedirs(os.path.join(work, d), exist_ok=True)
    try:
        sh("mount", "-t", "overlay", "overlay", "-o",
           f"lowerdir={os.path.join(BOX, 'root')},upperdir={work}/upper,workdir={work}/work",
           root)
    except AssertionError as e:  # no overlayfs: a copy
        say(f"no overlay ({e}); copying the image")
        sh("cp", "-a", os.path.join(BOX, "root", "."), root)
    prepare(root, work)
    env = dict(os.environ)
    cg2 = cgroup2()
    if cg2 and os.path.realpath(cg2) != "/sys/fs/cgroup":
        # a hybrid host (cgroup v1 controllers, v2 beside them): the box
        # gets the v2 hierarchy, as Debian 12 boots, in a cgroup of its own
        # (a v1 box's user manager cannot kill its units' cgroups: EIO)
        d = os.path.join(cg2, f"iconfs-login-{os.getpid()}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
        env["SYSTEMD_NSPAWN_UNIFIED_HIERARCHY"] = "1"
    say("box prepared; booting")
    argv = ["systemd-nspawn", "-D", root, "-b", "--register=no", "--keep-unit",
            "-M", "iconfsbox", "--link-journal=no", "--bind=/dev/fuse",
            f"--bind-ro={LOGIN}:/login", f"--bind={work}/results:/results"]
    sys.stdout.flush()
    os.execvpe(argv[0], argv, env)


def cgroup2():
    """Where the cgroup v2 hierarchy is mounted, None without one."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            if fields[fields.index("-") + 1] == "cgroup2":
                return fields[4]
    return None


def remove_cgroup(pid):
    """The box's cgroup (boot) and what its systemd left below it."""
    cg2 = cgroup2()
    top = cg2 and os.path.join(cg2, f"iconfs-login-{pid}")
    if not top or not os.path.isdir(top):
        return
    for d, _, _ in sorted(os.walk(top), key=lambda w: -w[0].count("/")):
        try:
            os.rmdir(d)
        except OSError as e:
            say(f"cannot remove the box's cgroup {d}: {e}")


def children(pid):
    kids = []
    try:
        for t in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{t}/children") as f:
                kids += [int(k) for k in f.read().split()]
    except OSError:
        pass
    return kids


def run_box(work):
    """Boot the box; (exit status, console text, seconds)."""
    os.makedirs(os.path.join(work, "results"))
    console = os.path.join(work, "console.log")
    t0 = time.monotonic()
    with open(console, "w") as f:
        p = subprocess.Popen(["unshare", "--mount", "--propagation", "private",
                              sys.executable, os.path.abspath(__file__), "--boot", work],
                             stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT)
        try:
            rc = p.wait(timeout=BOOT_TIMEOUT)
        except BaseException as e:  # an overrun, or the test runner's SIGTERM
            say("the box overran: powering it off" if isinstance(e, subprocess.TimeoutExpired)
                else f"interrupted ({e!r}): powering the box off")
            inits = children(p.pid)  # the container's PID 1
            p.send_signal(signal.SIGTERM)  # nspawn asks the box to power off
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                for k in inits:
                    try:
                        os.kill(k, signal.SIGKILL)  # ends its whole PID namespace
                    except OSError:
                        pass
                p.kill()
                p.wait()
            rc = "overran"
            if not isinstance(e, subprocess.TimeoutExpired):
                raise
        finally:
            remove_cgroup(p.pid)
    with open(console, errors="replace") as f:
        return rc, f.read(), time.monotonic() - t0


def tail(path, n=120):
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as e:
        return f"({e})"
    return "\n".join(lines[-n:])


def fmt(x, unit=" s", sign=""):
    return "none" if x is None else f"{x:{sign}.2f}{unit}"


# ---------------------------------------------------------------- the checks

def judge(r):
    login = r.get("login", {})
    a = login.get("answer_after_s")
    probe = login.get("probe", {})
    rel = {k: (login[k] - login["manager_start"]) if login.get(k) and login.get("manager_start")
           else None for k in ("unit_start", "unit_ready", "manager_ready", "probe_started")}
    at = {k: fmt(v, sign="+") for k, v in rel.items()}
    say(f"1. mount answers {fmt(a)} after the user manager's start (unit started at "
        f"{at['unit_start']}, ready at {at['unit_ready']}, manager ready at "
        f"{at['manager_ready']}, probe polling from {at['probe_started']}); theme "
        f"{probe.get('value')!r}, icons/ {str(probe.get('icons'))[:200]}")
    check(a is not None and a <= 5,
          f"1. the mount answers within 5 s of the user manager's start: {fmt(a)} "
          f"({probe.get('error') or ''} errors {probe.get('errors')}; unit {login.get('unit')}; "
          f"{login.get('error') or ''})")

    env = r.get("environment", {})
    dirs = env.get("XDG_DATA_DIRS")
    say(f"2. session XDG_DATA_DIRS={dirs}")
    check(dirs is not None and dirs.split(":")[0].rstrip("/") == MNT,
          f"2. the session's XDG_DATA_DIRS starts with {MNT}: {dirs!r} "
          f"(rc {env.get('rc')} {env.get('stderr', '')}{env.get('error', '')})")

    gtk = r.get("gtk", {})
    icons = gtk.get("icons") or {}
    say(f"3. GTK 3 in the session chose {icons}; its XDG_DATA_DIRS={gtk.get('XDG_DATA_DIRS')}")
    check(bool(icons) and all(f and f.startswith(MNT + "/") for f in icons.values()),
          f"3. GTK 3 in the session loads Adwaita's 48-px icons from {MNT}: {icons} "
          f"(rc {gtk.get('rc')}, search path {gtk.get('search_path')}, "
          f"{(gtk.get('stderr') or '')[-600:]}{gtk.get('stdout', '')}{gtk.get('error', '')})")

    kill = r.get("kill", {})
    k = kill.get("answer_after_s")
    kprobe = kill.get("probe", {})
    say(f"4. after kill -9 of pid {kill.get('pid')}: a working mount after {fmt(k)} "
        f"(new pid {kill.get('new_pid')}, mounts at {MNT}: {kill.get('mounts')})")
    check(k is not None and k <= 3 and kill.get("new_pid") not in (None, 0, kill.get("pid")),
          f"4. a working mount within 3 s of kill -9: {fmt(k)} ({kprobe.get('error') or ''} "
          f"errors {kprobe.get('errors')}; new pid {kill.get('new_pid')}; unit {kill.get('unit')}; "
          f"mounts {kill.get('mounts')}; "
          f"{kill.get('error') or ''})")

    hang = r.get("hang", {})
    h = hang.get("answer_after_s")
    wd = hang.get("watchdog_s")
    hprobe = hang.get("probe", {})
    say(f"5. after SIGSTOP of pid {hang.get('pid')}: a working mount after {fmt(h)} "
        f"(WatchdogSec {hang.get('watchdog')}, new pid {hang.get('new_pid')}, "
        f"mounts {hang.get('mounts')})")
    check(h is not None and wd is not None and h <= wd + 5 and hang.get("stopped")
          and hang.get("new_pid") not in (None, 0, hang.get("pid")),
          f"5. a working mount within WatchdogSec + 5 s ({fmt(wd and wd + 5)}) of a hang: "
          f"{fmt(h)} ({hprobe.get('error') or ''} errors {hprobe.get('errors')}; "
          f"daemon stopped {hang.get('stopped')}, new pid {hang.get('new_pid')}; "
          f"unit {hang.get('unit')}; mounts {hang.get('mounts')}; {hang.get('error') or ''})")
    say(f"K1 kill={'%.2f' % k if k is not None else 'none'} "
        f"hang={'%.2f' % h if h is not None else 'none'} "
        f"watchdog={'%g' % wd if wd is not None else 'none'}")

    stop = r.get("stop", {})
    left = stop.get("after_stop")
    say(f"6. after systemctl --user stop (rc {stop.get('stop_rc')}, {fmt(stop.get('stop_took_s'))})"
        f": mounts at {MNT}: {left}; after start again: "
        f"{(stop.get('after_start') or {}).get('value')!r}")
    check(stop.get("stop_rc") == 0 and left == [],
          f"6. systemctl --user stop iconfs.service leaves no mount at {MNT}: {left} "
          f"(rc {stop.get('stop_rc')} {stop.get('stop_output', '')} before {stop.get('before')}; "
          f"unit {stop.get('unit_after_stop')}; {stop.get('error') or ''})")
    again = stop.get("after_start") or {}
    check(stop.get("start_rc") == 0 and again.get("t") is not None,
          f"6. systemctl --user start iconfs.service mounts again: rc {stop.get('start_rc')} "
          f"{stop.get('start_output', '')} {again.get('error') or ''} errors {again.get('errors')}")

    ts = r.get("theme_switch", {})
    say(f"7. icon-theme setting {ts.get('setting_before')}, mount theme {ts.get('before')!r}")
    for key, theme in (("to_hicolor", "hicolor"), ("back", "Adwaita")):
        s = ts.get(key) or {}
        say(f"7. gsettings set icon-theme {theme} (rc {s.get('set_rc')}, took "
            f"{fmt(s.get('set_took_s'))}): mount theme {s.get('value')!r} "
            f"{fmt(s.get('after_s'))} after it returned")
        check(s.get("set_rc") == 0 and s.get("value") == theme and s.get("after_s") is not None
              and s["after_s"] <= 1,
              f"7. the mount follows gsettings set icon-theme {theme} within 1 s: "
              f"theme {s.get('value')!r} after {fmt(s.get('after_s'))} "
              f"({s.get('set_output', '')} {s.get('probe_error') or ''} errors "
              f"{s.get('errors')}; {ts.get('error') or ''})")

    j = r.get("journal", {})
    say(f"8. journalctl --user -u iconfs: {j.get('lines')} lines, {j.get('serving')}")
    check(bool(j.get("serving")),
          f"8. the daemon's start-up line ('serving theme ...') is in journalctl --user -u "
          f"iconfs (rc {j.get('rc')} {j.get('stderr', '')}; {j.get('lines')} lines: "
          f"{j.get('head')}; {j.get('error') or ''})")

    for step, notes in (r.get("recovered") or {}).items():
        say(f"note: after {step} the mount did not answer; the driver cleaned up and "
            f"restarted the unit for the next check: {json.dumps(notes)[:800]}")


def state_line(st):
    """One run of iconfs-shared.service as the driver saw it."""
    st = st or {}
    took = (st["exit"] - st["start"]) if st.get("start") and st.get("exit") else None
    return (f"{st.get('state')} result={st.get('result')} status={st.get('status')} "
            f"ran {fmt(took)}, waited {fmt(st.get('waited_s'))}")


def layer_line(f):
    f = f or {}
    if not f.get("exists"):
        return f"no layer {f.get('error') or ''}"
    return (f"{'regular' if f.get('regular') else 'NOT A REGULAR FILE'} uid {f.get('uid')} "
            f"mode {f.get('mode')} {f.get('size')} bytes, dir {f.get('dir')}, "
            f"{f.get('renders')} renders, {f.get('test_theme_renders')} of {TEST_THEME} "
            f"({f.get('test_theme_rows')} rows, {f.get('test_theme_icons')} icons indexed)"
            f"{' ' + f['error'] if f.get('error') else ''}")


def dpkg_step(r, name):
    """One of the driver's dpkg steps (11-13): (the step, its dpkg run,
    iconfs-shared.service before it, the service's run after it)."""
    step = r.get(name) or {}
    return step, step.get("dpkg") or {}, step.get("before") or {}, step.get("after") or {}


def ran_well(st, before=None):
    """A run of iconfs-shared.service that started and ended with success;
    with `before` (the service's state earlier), another run than that."""
    return bool(st.get("started") and st.get("ended") and st.get("result") == "success" and
                (before is None or
                 st.get("invocation") not in (None, "", before.get("invocation"))))


def judge_package(r, build):
    """9-14: the package, its shared layer, its trigger, an upgrade, its purge."""
    deb, took, rc, verdict, out = build
    say(f"9. scripts/package built {os.path.basename(deb)} in {took:.1f} s "
        f"(exit status {rc}; {verdict})")
    check(rc == 0 and verdict.startswith("lintian: 0 errors"),
          f"9. scripts/package builds the package with no lintian error: exit status {rc}, "
          f"{verdict}")
    # dh_auto_test's meson test lines: every unit test of the tree, each OK
    ran = dict(re.findall(r"^\s*\d+/\d+ iconfs:unit / (\S+)\s+(\S+)", out, re.M))
    want = {os.path.basename(f)[5:-2] for f in glob.glob(os.path.join(HERE, "test-*.c"))}
    say(f"9. unit tests run by the package build in its chroot: "
        f"{sum(v == 'OK' for v in ran.values())} of {len(want)} OK")
    check(set(ran) == want and all(v == "OK" for v in ran.values()),
          f"9. the package build runs every unit test and each passes: {ran}, want {sorted(want)}")

    inst = r.get("package") or {}
    say(f"9. dpkg -i {inst.get('deb')} in the box: exit status {inst.get('rc')} in "
        f"{fmt(inst.get('took_s'))}; dpkg-query: {inst.get('dpkg_query')!r}; "
        f"iconfs.service for every user: {inst.get('global_enabled')} "
        f"({inst.get('wants_link')}); {SHARED_PATH} {inst.get('path_enabled')}, "
        f"{inst.get('path_active')}")
    check(inst.get("rc") == 0 and str(inst.get("dpkg_query", "")).startswith("ii"),
          f"9. dpkg -i of the package in the booted box installs it: exit status "
          f"{inst.get('rc')}, dpkg-query {inst.get('dpkg_query')!r}: "
          f"{(inst.get('output') or '')[-1500:]} {inst.get('error') or ''}")
    check(inst.get("global_enabled") == "enabled" and inst.get("wants_link"),
          f"9. the package enabled iconfs.service for every user (nothing else does in the "
          f"box): systemctl --global is-enabled says {inst.get('global_enabled')!r}, "
          f"/etc/systemd/user/default.target.wants/iconfs.service -> {inst.get('wants_link')} "
          f"{inst.get('wants_link_error') or ''}")
    check(inst.get("path_enabled") == "enabled" and inst.get("path_active") == "active",
          f"9. the package enabled and started {SHARED_PATH}: {inst.get('path_enabled')!r}, "
          f"{inst.get('path_active')!r}")

    sh_ = r.get("shared") or {}
    first = sh_.get("first_run") or {}
    began = sh_.get("started_after_dpkg_began_s")
    ended = sh_.get("ended_after_dpkg_returned_s")
    say(f"10. the installation's build of the layer: started {fmt(began, sign='+')} after "
        f"dpkg -i began, ended {fmt(ended, sign='+')} after dpkg -i returned "
        f"(at dpkg's end: {state_line(inst.get('shared_at_end'))}, jobs "
        f"{inst.get('jobs_at_end')}); {state_line(first)}")
    check(first.get("result") == "success" and first.get("status") == "0" and
          began is not None and 0 <= began <= (inst.get("took_s") or 0) + 10,
          f"10. installing the package starts {SHARED_PATH[:-5]}.service (the postinst on "
          f"configure): a run that began {fmt(began, sign='+')} after dpkg -i began (dpkg took "
          f"{fmt(inst.get('took_s'))}): {state_line(first)} {sh_.get('error') or ''}")
    check(ended is not None and ended > 0,
          f"10. ... without making dpkg wait for the render: the run ended "
          f"{fmt(ended, sign='+')} after dpkg -i returned")
    lay = sh_.get("layer") or {}
    say(f"10. {LAYER}: {layer_line(lay)}")
    check(lay.get("exists") and lay.get("regular") and lay.get("uid") == 0 and
          lay.get("mode") == "0644" and (lay.get("renders") or 0) > 0 and
          lay.get("dir") == "0755 uid 0",
          f"10. the confined service built {LAYER}, a regular file of root's, mode 0644, with "
          f"renders, in a 0755 directory of root's: {layer_line(lay)}")
    st = sh_.get("status") or {}
    say(f"10. {USER}'s iconfs status: {st.get('line')!r} (exit status {st.get('rc')})")
    check(st.get("pngs") and st.get("line", "").find(LAYER) >= 0,
          f"10. {USER}'s `iconfs status` takes the layer: {st.get('line')!r} "
          f"(exit status {st.get('rc')}: {st.get('output')})")
    cs = sh_.get("check_shared") or {}
    tap = cs.get("tap") or []
    passed = sum(1 for l in tap if l.startswith("ok"))
    say(f"10. check-shared.sh: {passed}/{len(tap)} ok in {fmt(cs.get('took_s'))} "
        f"(exit status {cs.get('rc')}, plan {cs.get('plan')})")
    for line in tap:
        say(f"    {line}")
        check(line.startswith("ok"), f"10. check-shared.sh: {line}")
    for line in cs.get("comments") or []:
        say(f"    {line}")
    check(cs.get("rc") == 0 and tap and cs.get("plan") == f"1..{len(tap)}",
          f"10. check-shared.sh passes: exit status {cs.get('rc')}, {passed}/{len(tap)} ok, plan "
          f"{cs.get('plan')} {cs.get('stderr') or ''}")

    th, d, before, after = dpkg_step(r, "theme_package")
    lb, la = th.get("layer_before") or {}, th.get("layer_after") or {}
    sb, sa = th.get("status_before") or {}, th.get("status_after") or {}
    say(f"11. dpkg -i {th.get('deb')} ({SHARED_PATH} stopped: {th.get('path_stop')}): exit "
        f"status {d.get('rc')} in {fmt(d.get('took_s'))}; the trigger's run started "
        f"{fmt(th.get('started_after_dpkg_began_s'), sign='+')} after dpkg began, ended "
        f"{fmt(th.get('ended_after_dpkg_returned_s'), sign='+')} after it returned: "
        f"{state_line(after)}")
    say(f"11. layer before: {layer_line(lb)}; after: {layer_line(la)}; {USER}'s status "
        f"{sb.get('pngs')} -> {sa.get('pngs')} PNGs")
    check(d.get("rc") == 0 and th.get("path_stop", [1])[0] == 0,
          f"11. dpkg -i of a theme package in the box: exit status {d.get('rc')} "
          f"{(d.get('output') or '')[-1000:]} (stopping {SHARED_PATH}: {th.get('path_stop')}) "
          f"{th.get('error') or ''}")
    check(ran_well(after, before),
          f"11. the dpkg trigger ran {SHARED_PATH[:-5]}.service again after the theme package's "
          f"installation (the path unit stopped): {state_line(after)}, invocation "
          f"{before.get('invocation')} -> {after.get('invocation')}")
    # the layer is sized by use: a new theme is indexed in it at once, and
    # rendered once users ask for it (content/asked.h)
    check(lb.get("test_theme_icons") == 0 and (la.get("test_theme_icons") or 0) > 0 and
          (la.get("ino"), la.get("mtime_ns")) != (lb.get("ino"), lb.get("mtime_ns")),
          f"11. the refreshed layer's index has the new theme's icon: {layer_line(lb)} -> "
          f"{layer_line(la)}")
    check(sb.get("pngs") is not None and sa.get("pngs") is not None,
          f"11. {USER}'s iconfs status takes the refreshed layer: {sb.get('line')!r} -> "
          f"{sa.get('line')!r}")
    check(th.get("path_start", [1])[0] == 0,
          f"11. {SHARED_PATH} starts again: {th.get('path_start')}")

    rm, d, _, after = dpkg_step(r, "theme_removal")
    la = rm.get("layer_after") or {}
    say(f"12. dpkg --purge {TEST_THEME}: exit status {d.get('rc')} in {fmt(d.get('took_s'))}; "
        f"run started {fmt(rm.get('started_after_dpkg_began_s'), sign='+')} after: "
        f"{state_line(after)}; layer {layer_line(la)}")
    check(d.get("rc") == 0 and not rm.get("theme_dir_left"),
          f"12. dpkg --purge {TEST_THEME} removes the theme: exit status {d.get('rc')} "
          f"{(d.get('output') or '')[-800:]}; left /usr/share/icons/{TEST_THEME}: "
          f"{rm.get('theme_dir_left')} {rm.get('error') or ''}")
    check(ran_well(after) and la.get("exists") and la.get("test_theme_rows") == 0 and
          la.get("test_theme_icons") == 0 and (la.get("renders") or 0) > 0,
          f"12. removing the theme package refreshes the layer without its renders: "
          f"{state_line(after)}; {layer_line(la)}")

    ri, d, before, after = dpkg_step(r, "reinstall")
    m = ri.get("mount") or {}
    say(f"13. dpkg -i {os.path.basename(deb)} again: exit status {d.get('rc')} in "
        f"{fmt(d.get('took_s'))}; run started {fmt(ri.get('started_after_dpkg_began_s'), sign='+')}"
        f" after dpkg began, ended {fmt(ri.get('ended_after_dpkg_returned_s'), sign='+')} after it "
        f"returned: {state_line(after)}; {USER}'s daemon pid {ri.get('pid_before')} -> "
        f"{ri.get('pid_after')}, mount theme {m.get('value')!r}")
    check(d.get("rc") == 0,
          f"13. dpkg -i of the installed package again: exit status {d.get('rc')} "
          f"{(d.get('output') or '')[-1000:]} {ri.get('error') or ''}")
    check(ran_well(after, before),
          f"13. configuring the package again (an upgrade) starts {SHARED_PATH[:-5]}.service: "
          f"{state_line(after)}, invocation {before.get('invocation')} -> "
          f"{after.get('invocation')}")
    check(m.get("t") is not None and ri.get("pid_after") == ri.get("pid_before") not in (None, 0),
          f"13. ... and leaves {USER}'s running mount alone: daemon pid {ri.get('pid_before')} -> "
          f"{ri.get('pid_after')}, mount {m}")

    pu = r.get("purge") or {}
    apt = pu.get("apt") or {}
    say(f"14. {USER}'s unit stopped (exit status {(pu.get('user_stop') or [None])[0]}, mounts "
        f"{pu.get('mounts_after_user_stop')}); apt-get purge iconfs: exit status {apt.get('rc')} "
        f"in {fmt(apt.get('took_s'))}; left: files {pu.get('left')}, named {pu.get('named')}, "
        f"links {pu.get('etc_systemd')}, units {pu.get('unit_files')}, trigger interest "
        f"{pu.get('trigger_interest')}; users' own data (not the package's): "
        f"{pu.get('users_data')}")
    check((pu.get("user_stop") or [1])[0] == 0 and pu.get("mounts_after_user_stop") == [],
          f"14. {USER}'s iconfs.service stops before the purge: {pu.get('user_stop')}, mounts "
          f"{pu.get('mounts_after_user_stop')} {pu.get('error') or ''}")
    check(apt.get("rc") == 0,
          f"14. apt-get purge iconfs: exit status {apt.get('rc')} {(apt.get('output') or '')[-1500:]}")
    check(pu.get("left") == [],
          f"14. the purge leaves none of the package's files, /var/cache/iconfs or the "
          f"enablement links: {pu.get('left')}")
    dl = pu.get("dpkg_L") or {}
    dq = pu.get("dpkg_query") or {}
    check(dl.get("rc") not in (None, 0) and dl.get("files") == [] and dq.get("rc") not in (None, 0),
          f"14. dpkg knows no iconfs after the purge: dpkg -L exit status {dl.get('rc')} "
          f"{dl.get('files')} {dl.get('stderr')!r}; dpkg-query exit status {dq.get('rc')} "
          f"{dq.get('output')!r}")
    ge = pu.get("global_enabled") or {}
    check(ge.get("rc") not in (None, 0) and pu.get("unit_files") == [] and
          pu.get("etc_systemd") == [],
          f"14. no unit of iconfs is left, nor enabled: systemctl --global is-enabled "
          f"iconfs.service {ge}; list-unit-files {pu.get('unit_files')}; under /etc/systemd "
          f"{pu.get('etc_systemd')}")
    check(pu.get("named") == [] and pu.get("trigger_interest") == [],
          f"14. nothing named after iconfs is left on the box's system (/, /run; not the test's "
          f"packages, not users' own data): {pu.get('named')}; dpkg's trigger interest: "
          f"{pu.get('trigger_interest')}")


def figures(r, package_s, built, box_s, total_s):
    """The run's times, one line."""
    inst = r.get("package") or {}
    first = (r.get("shared") or {}).get("first_run") or {}
    trig = (r.get("theme_package") or {}).get("after") or {}
    rm = (r.get("theme_removal") or {}).get("after") or {}
    cs = (r.get("shared") or {}).get("check_shared") or {}
    re_ = r.get("reinstall") or {}
    apt = (r.get("purge") or {}).get("apt") or {}

    def ran(st):
        return fmt(st["exit"] - st["start"]) if st.get("start") and st.get("exit") else "none"
    say(f"figures: package {package_s:.1f} s, image {'built %.0f s' % built if built else 'cached'}, "
        f"box {box_s:.1f} s, whole test {total_s:.1f} s; dpkg -i {fmt(inst.get('took_s'))}; "
        f"layer built by the installation in {ran(first)}, check-shared.sh "
        f"{fmt(cs.get('took_s'))}, the trigger's refresh {ran(trig)}, after the theme's removal "
        f"{ran(rm)}; dpkg -i again {fmt((re_.get('dpkg') or {}).get('took_s'))}, its refresh "
        f"{ran(re_.get('after') or {})}; apt-get purge {fmt(apt.get('took_s'))}")


def interrupted(*_):
    raise KeyboardInterrupt("SIGTERM")


def main():
    if os.geteuid() != 0:
        skip("a booted container needs root")
    if not os.path.exists("/dev/fuse"):
        skip("no /dev/fuse")
    for tool in ("debootstrap", "systemd-nspawn", "unshare", "useradd", "git", "dpkg-deb",
                 "dpkg-buildpackage", "dh", "lintian"):
        check(shutil.which(tool) is not None,
              f"{tool} is installed (scripts/setup installs debootstrap, systemd-container, "
              f"debhelper, dpkg-dev, lintian)")
    # the runner's time-out (SIGTERM) ends debootstrap, or powers the box
    # off, on the way out
    signal.signal(signal.SIGTERM, interrupted)
    t_start = time.monotonic()
    os.makedirs(BOX, exist_ok=True)
    work = tempfile.mkdtemp(prefix="login-run-", dir=TEST_DIR)
    try:
        debs = os.path.join(work, "debs")
        deb, package_s, package_rc, verdict, package_out = build_package(debs)
        say(f"package: {os.path.basename(deb)} built in {package_s:.1f} s (scripts/package "
            f"exit status {package_rc}; {verdict})")
        for line in package_out.splitlines():
            if re.match(r"^[EW]: ", line):
                say(f"  {line}")
        for e in os.listdir(debs):  # the debug symbols stay out of the box
            if e.endswith(".deb") and e != os.path.basename(deb):
                os.unlink(os.path.join(debs, e))
        make_theme_deb(debs)
        lock = open(os.path.join(BOX, "lock"), "w")
        _, built = ensure_image(lock, deb)
        rc, console, took = run_box(work)
        say(f"box ran {took:.1f} s (image {'built in %.0f s' % built if built else 'cached'}), "
            f"nspawn exit status {rc}")
        try:
            with open(os.path.join(work, "results", "results.json")) as f:
                results = json.load(f)
        except (OSError, ValueError) as e:
            results = {}
            check(False, f"the driver in the box wrote its results ({e})")
        check(rc == 0 and results.get("done"),
              f"the box booted, ran its checks and powered off (nspawn exit status {rc}, "
              f"steps {results.get('steps')})")
        judge(results)
        judge_package(results, (deb, package_s, package_rc, verdict, package_out))
        figures(results, package_s, built, took, time.monotonic() - t_start)
        if common.failures:
            res = os.path.join(work, "results")
            say("\n==== console (tail) ====\n" + "\n".join(console.splitlines()[-150:]))
            for name, n in (("status.txt", 80), ("user-journal.txt", 80),
                            ("user-journal-root.txt", 80), ("failed.txt", 20),
                            ("journal.txt", 150), ("shared-journal.txt", 120),
                            ("dpkg-log.txt", 60), ("journal-end.txt", 150),
                            ("driver.log", 100)):
                say(f"\n==== {name} (tail) ====\n" + tail(os.path.join(res, name), n))
            say("\n==== mounts at the end ====\n" +
                "\n".join(l for l in tail(os.path.join(res, "mountinfo.txt"), 1000).splitlines()
                          if "/run/user" in l))
    finally:
        if os.environ.get("ICONFS_KEEP_BOX") != "1":
            remove_tree(work)
        else:
            say(f"kept {work}")
    finish()


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--boot":
        boot(sys.argv[2])
    else:
        try:
            main()
        except AssertionError as e:  # the box could not be made
            check(False, str(e))
            finish()
