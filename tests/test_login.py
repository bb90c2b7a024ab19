#!/usr/bin/env python3
"""A real login: a booted Debian 12 container (systemd as its PID 1) with
iconfs installed as a package installs it, the user unit enabled globally
and a lingering user (alice, uid 1000) whose manager starts at boot.

The box is a pristine debootstrap of the packages below, cached under the
build directory (rebuilt when the list changes, built in a temporary
directory and renamed when complete); each run boots a fresh overlay of it
in a mount namespace of its own, so nothing of a run outlives it. A driver
inside the box (tests/login/driver.py) measures, as the user and in the
user's session; this side judges:

 1. the mount answers within 5 s of the user manager's start;
 2. the session's environment has the mount first in XDG_DATA_DIRS;
 3. GTK 3 started in the session takes Adwaita's icons from the mount;
 4. after kill -9 of the daemon a working mount is back within 3 s;
 5. after SIGSTOP (a hang) one is back within WatchdogSec + 5 s;
 6. `systemctl --user stop iconfs.service` leaves no mount;
 7. a change of GNOME's icon-theme setting is followed within 1 s;
 8. the daemon's messages are in `journalctl --user -u iconfs`.

Needs root (a booted container); skipped only without root or /dev/fuse.
The box's /dev/fuse is the host's, bound in and set to 0666 as Debian's
udev rule makes it. On a host with cgroup v1 controllers and v2 beside
them (hybrid) the box gets the v2 hierarchy, as Debian 12 boots. On a
failure the box's console, journal and the unit's status are printed;
ICONFS_KEEP_BOX=1 keeps the run's directory (overlay, results) for a look.
The figures of 4 and 5 are printed for scripts/bench as
`K1 kill=SECONDS hang=SECONDS watchdog=SECONDS` ("none": not measured).
"""
import fcntl
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
from common import check, finish, skip  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
LOGIN = os.path.join(HERE, "login")
ICONFS = os.path.abspath(os.environ.get("ICONFS") or
                         os.path.join(HERE, "..", "build", "cli", "iconfs"))
BUILD = os.path.dirname(os.path.dirname(ICONFS))
TEST_DIR = os.path.abspath(os.environ.get("ICONFS_TEST_DIR") or os.path.join(BUILD, "tests"))
BOX = os.path.join(TEST_DIR, "login-box")
USER, UID = "alice", 1000
MNT = f"/run/user/{UID}/iconfs"
BOOT_TIMEOUT = 480  # the whole boot, checks and poweroff

# the box: a login (systemd, logind, a session bus), FUSE, the session's
# settings (dconf, gsettings), GTK 3 with the themes it looks up; the
# iconfs binary's libraries are added from `ldd` (box_packages)
PACKAGES = """
    systemd systemd-sysv dbus dbus-user-session libpam-systemd fuse3
    python3 python3-gi gir1.2-gtk-3.0 adwaita-icon-theme hicolor-icon-theme
    dconf-gsettings-backend dconf-service gsettings-desktop-schemas libglib2.0-bin
    librsvg2-common
""".split()


def say(*args):
    print(*args, flush=True)


# ---------------------------------------------------------------- the image

def codename():
    with open("/etc/os-release") as f:
        for line in f:
            if line.startswith("VERSION_CODENAME="):
                return line.split("=", 1)[1].strip().strip('"')
    return "bookworm"


def mirror(suite):
    """The host's Debian mirror for `suite` (deb822 or one-line sources)."""
    files = ["/etc/apt/sources.list"]
    d = "/etc/apt/sources.list.d"
    if os.path.isdir(d):
        files += [os.path.join(d, f) for f in sorted(os.listdir(d))]
    for path in files:
        try:
            text = open(path).read()
        except OSError:
            continue
        if path.endswith(".sources"):
            for para in re.split(r"\n\s*\n", text):
                keys = dict(re.findall(r"^(\w[\w-]*):\s*(.*)$", para, re.M))
                if "deb" in keys.get("Types", "").split() and \
                        suite in keys.get("Suites", "").split():
                    for uri in keys.get("URIs", "").split():
                        if "security" not in uri:
                            return uri
        else:
            for line in text.splitlines():
                m = re.match(r"^deb\s+(?:\[[^]]*\]\s+)?(\S+)\s+(\S+)\s", line)
                if m and m.group(2) == suite and "security" not in m.group(1):
                    return m.group(1)
    return "http://deb.debian.org/debian"


def box_packages():
    """PACKAGES and the Debian packages of every library the binary loads."""
    out = subprocess.run(["ldd", ICONFS], capture_output=True, text=True, check=True).stdout
    libs = [m.group(1) for m in re.finditer(r"=>\s+(/\S+)", out)]
    pkgs = set(PACKAGES)
    candidates = {}
    for lib in libs:
        c = {lib, os.path.realpath(lib)}
        c |= {p[4:] if p.startswith("/usr/") else "/usr" + p for p in c}
        candidates[lib] = c
    # one dpkg -S for all (it exits 1 when any path is unknown: read its output)
    p = subprocess.run(["dpkg", "-S", *sorted(set().union(*candidates.values()))],
                       capture_output=True, text=True)
    owner = {}
    for line in p.stdout.splitlines():
        if line.startswith("diversion ") or ": " not in line:
            continue
        pkg, path = line.split(": ", 1)
        owner[path.strip()] = pkg.split(",")[0].split(":")[0].strip()
    for lib, c in candidates.items():
        found = [owner[x] for x in c if x in owner]
        if not found:
            raise AssertionError(f"no Debian package has {lib}, a library of {ICONFS}")
        pkgs.add(found[0])
    return sorted(pkgs)


def remove_tree(path):
    """rm -rf that never leaves the tree's filesystem."""
    subprocess.run(["rm", "-rf", "--one-file-system", path], capture_output=True)


def ensure_image(lock):
    """The cached pristine root of the box; (path, seconds spent building).
    Built under an exclusive lock on `lock`, which is left shared: a run
    that uses the image keeps another from rebuilding it under it."""
    os.makedirs(BOX, exist_ok=True)
    suite = codename()
    url = mirror(suite)
    pkgs = box_packages()
    want = f"suite {suite}\nmirror {url}\nvariant minbase\n" + "\n".join(pkgs) + "\n"
    root = os.path.join(BOX, "root")
    stamp = os.path.join(BOX, "stamp")
    fcntl.flock(lock, fcntl.LOCK_EX)  # one build at a time, none while in use
    try:
        return build_image(root, stamp, want, suite, url, pkgs)
    finally:
        fcntl.flock(lock, fcntl.LOCK_SH)


def build_image(root, stamp, want, suite, url, pkgs):
    """ensure_image under its lock: debootstrap when the stamp differs."""
    for e in os.listdir(BOX):  # what a killed build left
        if e.startswith("root.tmp-") or e.startswith("root.old-"):
            remove_tree(os.path.join(BOX, e))
    try:
        have = open(stamp).read()
    except OSError:
        have = None
    if have == want and os.path.isdir(root):
        return root, 0.0
    say(f"building the login box: debootstrap {suite} from {url} "
        f"({len(pkgs)} packages and their dependencies)")
    if not shutil.which("debootstrap") or not shutil.which("systemd-nspawn"):
        raise AssertionError("debootstrap and systemd-nspawn are needed (scripts/setup "
                             "installs debootstrap and systemd-container)")
    t0 = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="root.tmp-", dir=BOX)
    os.chmod(tmp, 0o755)
    log = os.path.join(BOX, "debootstrap.log")
    with open(log, "w") as f:
        # in a mount namespace of its own: the target's /proc and /sys
        # go with it, even when it is killed
        # (a process group of its own: an interrupted build ends all of it)
        p = subprocess.Popen(["unshare", "--mount", "--propagation", "private",
                              "debootstrap", "--variant=minbase",
                              "--include=" + ",".join(pkgs), suite, tmp, url],
                             stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT,
                             start_new_session=True)
        try:
            p.wait()
        except BaseException:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            raise
    if p.returncode != 0:
        tail = open(log).read()[-4000:]
        remove_tree(tmp)
        raise AssertionError(f"debootstrap exited {p.returncode}:\n{tail}")
    archives = os.path.join(tmp, "var/cache/apt/archives")
    for e in os.listdir(archives):
        if e.endswith(".deb"):
            os.unlink(os.path.join(archives, e))
    if os.path.exists(stamp):
        os.unlink(stamp)
    if os.path.isdir(root):
        old = tempfile.mkdtemp(prefix="root.old-", dir=BOX)
        os.rename(root, os.path.join(old, "root"))
        remove_tree(old)
    os.rename(tmp, root)
    with open(stamp + ".tmp", "w") as f:
        f.write(want)
    os.rename(stamp + ".tmp", stamp)
    took = time.monotonic() - t0
    say(f"login box built in {took:.0f} s")
    return root, took


# ---------------------------------------------------------------- one boot

def sh(*argv):
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} exited {p.returncode}: "
                             f"{(p.stdout + p.stderr)[-2000:]}")
    return p.stdout


def prepare(root):
    """Install iconfs into the box as a package would and make the login."""
    sh("meson", "install", "-C", BUILD, "--no-rebuild", "--quiet", "--destdir", root)
    sh("systemctl", f"--root={root}", "--global", "enable", "iconfs.service")
    sh("useradd", "--root", root, "--uid", str(UID), "--user-group", "--create-home",
       "--shell", "/bin/bash", USER)
    os.makedirs(os.path.join(root, "var/lib/systemd/linger"), exist_ok=True)
    open(os.path.join(root, "var/lib/systemd/linger", USER), "w").close()
    os.makedirs(os.path.join(root, "var/log/journal"), exist_ok=True)
    for unit in ("iconfs-login-fuse.service", "iconfs-login-check.service"):
        shutil.copy(os.path.join(LOGIN, unit), os.path.join(root, "etc/systemd/system", unit))
    sh("systemctl", f"--root={root}", "enable", "iconfs-login-fuse.service",
       "iconfs-login-check.service")
    with open(os.path.join(root, "etc/hostname"), "w") as f:  # debootstrap copied the host's
        f.write("iconfsbox\n")


def boot(work):
    """In a mount namespace of its own (unshare): a fresh overlay of the
    cached image, iconfs installed into it, then exec the booted container."""
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
    prepare(root)
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


def interrupted(*_):
    raise KeyboardInterrupt("SIGTERM")


def main():
    if os.geteuid() != 0:
        skip("a booted container needs root")
    if not os.path.exists("/dev/fuse"):
        skip("no /dev/fuse")
    for tool in ("debootstrap", "systemd-nspawn", "unshare", "useradd", "meson"):
        check(shutil.which(tool) is not None,
              f"{tool} is installed (scripts/setup installs debootstrap, systemd-container)")
    # the runner's time-out (SIGTERM) ends debootstrap, or powers the box
    # off, on the way out
    signal.signal(signal.SIGTERM, interrupted)
    os.makedirs(BOX, exist_ok=True)
    lock = open(os.path.join(BOX, "lock"), "w")
    _, built = ensure_image(lock)
    work = tempfile.mkdtemp(prefix="login-run-", dir=TEST_DIR)
    try:
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
        if common.failures:
            res = os.path.join(work, "results")
            say("\n==== console (tail) ====\n" + "\n".join(console.splitlines()[-150:]))
            for name, n in (("status.txt", 80), ("user-journal.txt", 80),
                            ("user-journal-root.txt", 80), ("failed.txt", 20),
                            ("journal.txt", 150), ("driver.log", 100)):
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
