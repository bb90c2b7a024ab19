#!/usr/bin/env python3
"""Flatpak apps see the mount (issue 28): `iconfs flatpak enable|disable|
status` with a real Flatpak, offline, as the test user.

The runtime is made of Debian 12 files: the /usr of a debootstrapped tree
(python3, python3-gi, GTK 3), made by tests/debootstrap.py as
tests/test_login.py's box is: by this file run as root (`--build-tree`,
through asuser), cached under the build directory
(build/tests/flatpak-tree, rebuilt when its package list changes, built in
a temporary directory and renamed when complete, under a lock). The
runtime leaves out Adwaita's icons, so that the host's (through
/run/host/share or the mount) are the only ones, and sets the
XDG_DATA_DIRS the freedesktop runtimes set. Two apps: a python3-gi script
that looks icons up with GTK 3 and reports the files it chose, their pixel
size and their user.iconfs.source, one of which sets its own XDG_DATA_DIRS
in its metadata. Built with flatpak build-init, build-finish and
build-export into a local repository and installed from it with `flatpak
--user`, in a HOME of the test's own; iconfs is mounted at
$XDG_RUNTIME_DIR/iconfs, the only place xdg-run/iconfs reaches.

 1. without an override the app takes Adwaita from /run/host/share;
 2. no override before: enable writes exactly the grant and XDG_DATA_DIRS
    with the mount before /run/host/user-share; again changes nothing;
    status says so; the app's GTK chooses files of the mount, loads them
    at 48x48 and reads their user.iconfs.source from inside the sandbox;
    disable leaves no file, the app no longer sees the mount;
 3. a user override with other keys, a comment and its own XDG_DATA_DIRS:
    enable keeps them and inserts into that value; disable restores the
    very bytes;
 4. an override changed after enable: disable takes out only iconfs's;
 5. --all: every installed app, the metadata's XDG_DATA_DIRS for the one
    that sets it; status one line per app; disable --all undoes them;
 6. errors: an unknown app, flatpak missing, usage.

Needs flatpak (scripts/setup) and unprivileged user namespaces
(bubblewrap); without them, or without a runtime, the test fails with the
reason. Skipped only without /dev/fuse.
"""
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import debootstrap

HERE = os.path.dirname(os.path.abspath(__file__))
ICONFS = os.path.abspath(os.environ.get("ICONFS") or
                         os.path.join(HERE, "..", "build", "cli", "iconfs"))
# the tree's packages (dbus-x11: the session bus dconf-service needs, which
# debootstrap does not pick from alternatives)
TREE_PACKAGES = ["python3", "python3-gi", "gir1.2-gtk-3.0", "hicolor-icon-theme", "dbus-x11"]
RUNTIME = "org.iconfs.Test.Platform"
APP = "org.iconfs.Test.App"
OTHER = "org.iconfs.Test.Other"  # sets XDG_DATA_DIRS in its metadata
BRANCH = "1"
# the freedesktop runtimes' value (flatpak's own default is /app/share:/usr/share)
RUNTIME_DIRS = "/app/share:/usr/share:/usr/share/runtime/share:/run/host/user-share:/run/host/share"
OTHER_DIRS = "/app/share:/usr/share:/run/host/share"
# what the runtime leaves out of Debian's /usr
DROP = ("share/locale", "share/doc", "share/man", "share/info", "share/icons/Adwaita",
        "share/zoneinfo", "lib/systemd", "share/perl5", "lib/x86_64-linux-gnu/perl-base")
ETC = ("ld.so.conf", "ld.so.conf.d", "fonts", "gtk-3.0", "mime.types", "python3",
       "python3.11", "nsswitch.conf")
NAMES = ["edit-copy", "folder"]

APP_SCRIPT = r'''#!/usr/bin/python3
"""icons.py MNT THEME SIZE NAME...: the files GTK 3 chooses, as JSON."""
import json, os, sys
import gi
gi.require_version("Gtk", "3.0")
from gi.repository import Gtk
mnt, theme, size, names = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
it = Gtk.IconTheme.new()
it.set_custom_theme(theme)
out = {"XDG_DATA_DIRS": os.environ.get("XDG_DATA_DIRS"), "FOO": os.environ.get("FOO"),
       "mount_icons": os.path.isdir(os.path.join(mnt, "icons")), "icons": {}}
for n in names:
    info = it.lookup_icon(n, size, 0)
    r = {"file": info.get_filename() if info else None}
    if info:
        pb = info.load_icon()
        r["size"] = "%dx%d" % (pb.get_width(), pb.get_height())
        try:
            r["source"] = os.getxattr(r["file"], "user.iconfs.source").decode()
        except OSError as e:
            r["source"] = None
    out["icons"][n] = r
print(json.dumps(out))
'''

timings = {}


def say(*args):
    print(*args, flush=True)


# ---------------------------------------------------------------- the tree (root)

def tree_dir():
    """Where the tree is cached: beside the build's test logs."""
    d = os.environ.get("ICONFS_TEST_DIR") or os.path.join(os.path.dirname(os.path.dirname(ICONFS)),
                                                          "tests")
    return os.path.join(os.path.abspath(d), "flatpak-tree")


def build_tree():
    """As root: the cached debootstrapped tree (debootstrap.py); prints
    ROOT=path and BUILT=seconds. Under an exclusive lock while it builds,
    released when this process ends; the caller takes it shared while it
    copies."""
    box = tree_dir()
    os.makedirs(box, exist_ok=True)
    lock = open(os.path.join(box, "lock"), "w")
    os.chmod(lock.name, 0o644)
    try:
        root, took = debootstrap.ensure(box, TREE_PACKAGES, lock, "the Flatpak runtime's tree")
    except AssertionError as e:
        print(e)
        return 1
    print(f"ROOT={root}\nBUILT={took:.0f}")
    return 0


if __name__ == "__main__" and sys.argv[1:2] == ["--build-tree"]:
    sys.exit(build_tree())

# ---------------------------------------------------------------- as the user

import asuser  # noqa: E402
import common  # noqa: E402  (goes on as the test user)
from common import REAL_BASES, check, check_eq, finish, mounted, need_fuse, need_theme, read_or_none  # noqa: E402


def fail(why):
    """The test cannot go on: one clear line, exit 1."""
    check(False, why)
    finish()


def timed(name):
    class T:
        def __enter__(self):
            self.t0 = time.monotonic()

        def __exit__(self, *a):
            timings[name] = time.monotonic() - self.t0
    return T()


def sh(*argv, env=None, timeout=600):
    p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout)
    if p.returncode != 0:
        fail(f"{' '.join(argv)} exited {p.returncode}: {(p.stdout + p.stderr)[-2000:]}")
    return p.stdout


# ---------------------------------------------------------------- the tree

def tree_root(work):
    """The cached Debian tree: made or checked by this file as root
    (--build-tree); when this test never was root, one made earlier."""
    log = os.path.join(work, "tree.log")
    ok = asuser.as_root("sh", "-c", '"$0" "$1" --build-tree >"$2" 2>&1', sys.executable,
                        os.path.abspath(__file__), log)
    out = open(log).read() if os.path.exists(log) else ""
    vals = dict(l.split("=", 1) for l in out.splitlines() if l.startswith(("ROOT=", "BUILT=")))
    if ok and "ROOT" in vals:
        say(f"the Debian tree: {vals['ROOT']} "
            f"({'built in %s s' % vals['BUILT'] if vals.get('BUILT') != '0' else 'cached'})")
        return vals["ROOT"]
    if not out:  # never root (run by hand as a user): a tree made earlier
        root = os.path.join(tree_dir(), "root")
        if os.path.isdir(os.path.join(root, "usr")):
            say(f"the Debian tree: {root} (made earlier; not checked without root)")
            return root
    fail("no Debian tree for the runtime: debootstrap as root (this file's --build-tree) "
         f"failed or could not run: {out[-3000:].strip() or 'the test is not run as root'}")


def copy_usr(root, dst):
    """root/usr without DROP, and a few files of root/etc as usr/etc
    (a runtime's /etc)."""
    def ignore(d, names):
        rel = os.path.relpath(d, os.path.join(root, "usr"))
        return [n for n in names if os.path.normpath(os.path.join(rel, n)) in DROP]
    errors = []
    try:
        shutil.copytree(os.path.join(root, "usr"), dst, symlinks=True, ignore=ignore)
    except shutil.Error as e:
        errors = e.args[0]
    for e in ETC:
        src = os.path.join(root, "etc", e)
        try:
            if os.path.isdir(src) and not os.path.islink(src):
                shutil.copytree(src, os.path.join(dst, "etc", e), symlinks=True)
            elif os.path.lexists(src):
                os.makedirs(os.path.join(dst, "etc"), exist_ok=True)
                shutil.copy(src, os.path.join(dst, "etc", e), follow_symlinks=False)
        except (OSError, shutil.Error) as err:
            errors.append((src, str(err)))
    if errors:
        say(f"{len(errors)} files of the tree not copied (unreadable): {errors[:3]}")


# ---------------------------------------------------------------- flatpak

def build_and_install(root, work, env):
    """The runtime and both apps, exported to work/repo and installed from
    it in the user installation."""
    fp = lambda *a, **kw: sh("flatpak", *a, env=env, **kw)  # noqa: E731
    arch = fp("--default-arch").strip()
    repo = os.path.join(work, "repo")
    rt = os.path.join(work, "runtime")
    with timed("runtime files"):
        copy_usr(root, os.path.join(rt, "usr"))
    with open(os.path.join(rt, "metadata"), "w") as f:
        f.write(f"[Runtime]\nname={RUNTIME}\nruntime={RUNTIME}/{arch}/{BRANCH}\n"
                f"sdk={RUNTIME}/{arch}/{BRANCH}\n\n[Environment]\nXDG_DATA_DIRS={RUNTIME_DIRS}\n")
    with timed("runtime export"):
        fp("build-export", "--runtime", "--files=usr", "--disable-fsync", repo, rt, BRANCH)
    fp("--user", "remote-add", "--no-gpg-verify", "local", f"file://{repo}")
    with timed("runtime install"):
        fp("--user", "install", "-y", "--noninteractive", "local",
           f"runtime/{RUNTIME}/{arch}/{BRANCH}")
    with timed("apps build and install"):
        for app, extra in ((APP, []), (OTHER, [f"--env=XDG_DATA_DIRS={OTHER_DIRS}"])):
            d = os.path.join(work, app)
            fp("build-init", d, app, RUNTIME, RUNTIME, BRANCH)
            os.makedirs(os.path.join(d, "files", "bin"))
            script = os.path.join(d, "files", "bin", "icons.py")
            with open(script, "w") as f:
                f.write(APP_SCRIPT)
            os.chmod(script, 0o755)
            fp("build-finish", "--command=icons.py", *extra, d)
            fp("build-export", "--disable-fsync", repo, d, BRANCH)
            fp("--user", "install", "-y", "--noninteractive", "local",
               f"app/{app}/{arch}/{BRANCH}")


def run_app(app, mnt, env, what):
    """The app's GTK: its JSON (XDG_DATA_DIRS, FOO, whether the mount is
    there, per name the file, size and user.iconfs.source)."""
    p = subprocess.run(["flatpak", "run", app, mnt, "Adwaita", "48", *NAMES],
                       capture_output=True, text=True, env=env, timeout=120)
    lines = p.stdout.strip().splitlines()
    try:
        r = json.loads(lines[-1])
    except (IndexError, ValueError):
        check(False, f"{what}: flatpak run {app} exited {p.returncode}: "
                     f"{(p.stdout + p.stderr)[-1500:]}")
        return {"icons": {}}
    say(f"{what}: XDG_DATA_DIRS={r['XDG_DATA_DIRS']}; mount visible: {r['mount_icons']}; "
        + "; ".join(f"{n} -> {i['file']} {i.get('size')} (source {i.get('source')})"
                    for n, i in r["icons"].items()))
    return r


def check_sees(r, mnt, what):
    check(r.get("mount_icons") is True, f"{what}: the sandbox has {mnt}/icons")
    for n in NAMES:
        i = r["icons"].get(n) or {}
        check((i.get("file") or "").startswith(f"{mnt}/icons/Adwaita/48x48/"),
              f"{what}: GTK chooses {n} under the mount: {i.get('file')}")
        check_eq(i.get("size"), "48x48", f"{what}: {n} loads at 48x48")
        check((i.get("source") or "").startswith("/usr/share/icons/Adwaita/"),
              f"{what}: user.iconfs.source of {n} read inside the sandbox: {i.get('source')}")


def check_blind(r, mnt, what):
    check(r.get("mount_icons") is False, f"{what}: the sandbox has no {mnt}/icons")
    check(mnt not in (r.get("XDG_DATA_DIRS") or ""),
          f"{what}: XDG_DATA_DIRS without the mount: {r.get('XDG_DATA_DIRS')}")
    for n in NAMES:
        i = r["icons"].get(n) or {}
        check((i.get("file") or "").startswith("/run/host/share/icons/Adwaita/"),
              f"{what}: GTK takes {n} from /run/host/share: {i.get('file')}")
        check(i.get("source") is None, f"{what}: {n} has no user.iconfs.source")


def iconfs(env, *args):
    p = subprocess.run([ICONFS, "flatpak", *args], capture_output=True, text=True, env=env,
                       timeout=120)
    say(f"$ iconfs flatpak {' '.join(args)} -> {p.returncode}\n"
        + "".join(f"  | {l}\n" for l in (p.stdout + p.stderr).splitlines()).rstrip())
    return p


def status_lines(env):
    p = iconfs(env, "status")
    check_eq(p.returncode, 0, "status exits 0")
    return dict(l.split(": ", 1) for l in p.stdout.splitlines() if ": " in l)


# ---------------------------------------------------------------- the checks

def scenarios(env, mnt, state):
    over = os.path.join(env["XDG_DATA_HOME"], "flatpak", "overrides")
    path, other_path = os.path.join(over, APP), os.path.join(over, OTHER)
    dirs = RUNTIME_DIRS.replace(":/run/host/user-share", f":{mnt}:/run/host/user-share")

    # 1. without an override
    check_blind(run_app(APP, mnt, env, "1. before"), mnt, "1. before any override")
    st = status_lines(env)
    check_eq(st.get(APP), f"does not see the mount: no access to xdg-run/iconfs, "
                          f"XDG_DATA_DIRS lacks {mnt}", "1. status before")

    # 2. no override before
    check_eq(read_or_none(path), None, "2. no override of the app to start with")
    p = iconfs(env, "enable", APP)
    check_eq(p.returncode, 0, f"2. enable exits 0 ({p.stderr.strip()})")
    want = (f"[Context]\nfilesystems=xdg-run/iconfs:ro;\n\n"
            f"[Environment]\nXDG_DATA_DIRS={dirs}\n").encode()
    check_eq(read_or_none(path), want, "2. the override enable writes")
    p = iconfs(env, "enable", APP)
    check_eq((p.returncode, p.stdout.strip()), (0, f"{APP}: already enabled"),
             "2. enable again")
    check_eq(read_or_none(path), want, "2. a second enable changes nothing")
    shown = sh("flatpak", "override", "--user", "--show", APP, env=env)
    check(f"XDG_DATA_DIRS={dirs}" in shown, f"2. flatpak reads the override: {shown!r}")
    check_eq(status_lines(env).get(APP), "sees the mount (enabled by iconfs)", "2. status")
    r = run_app(APP, mnt, env, "2. enabled")
    check_eq(r.get("XDG_DATA_DIRS"), dirs, "2. XDG_DATA_DIRS inside the sandbox")
    check_sees(r, mnt, "2. enabled")
    p = iconfs(env, "disable", APP)
    check_eq((p.returncode, p.stdout.strip()), (0, f"{APP}: disabled"), "2. disable")
    check_eq(read_or_none(path), None, "2. disable leaves no override, as before")
    check_eq(sorted(os.listdir(state)) if os.path.isdir(state) else [], [],
             "2. disable leaves no state")
    check_blind(run_app(APP, mnt, env, "2. disabled"), mnt, "2. after disable")
    p = iconfs(env, "disable", APP)
    check_eq((p.returncode, p.stdout.strip()),
             (0, f"{APP}: not enabled by iconfs; nothing to undo"), "2. disable again")

    # 3. a user override with other keys and its own XDG_DATA_DIRS
    sh("flatpak", "override", "--user", "--share=network", "--filesystem=xdg-download",
       "--env=FOO=bar", f"--env=XDG_DATA_DIRS={OTHER_DIRS}", APP, env=env)
    before = b"# the user's own\n" + read_or_none(path).replace(b"FOO=bar", b"FOO = bar")
    with open(path, "wb") as f:
        f.write(before)
    say("3. the user's override:\n" + before.decode())
    p = iconfs(env, "enable", APP)
    check_eq(p.returncode, 0, f"3. enable exits 0 ({p.stderr.strip()})")
    mine = OTHER_DIRS.replace(":/run/host/share", f":{mnt}:/run/host/share")
    text = (read_or_none(path) or b"").decode()
    say("3. after enable:\n" + text)
    check("# the user's own" in text and "shared=network;" in text and "FOO=bar" in text,
          "3. enable keeps the user's comment and keys")
    check("filesystems=xdg-download;xdg-run/iconfs:ro;" in text,
          "3. enable adds the grant to the user's filesystems")
    check(f"XDG_DATA_DIRS={mine}\n" in text, f"3. the mount inserted into the user's "
                                             f"XDG_DATA_DIRS: want {mine}")
    r = run_app(APP, mnt, env, "3. enabled")
    check_eq((r.get("XDG_DATA_DIRS"), r.get("FOO")), (mine, "bar"),
             "3. XDG_DATA_DIRS and FOO inside the sandbox")
    check_sees(r, mnt, "3. enabled")
    p = iconfs(env, "disable", APP)
    check_eq(p.returncode, 0, "3. disable exits 0")
    check_eq(read_or_none(path), before, "3. disable restores the user's override byte for byte")
    r = run_app(APP, mnt, env, "3. disabled")
    check_eq(r.get("XDG_DATA_DIRS"), OTHER_DIRS, "3. the user's XDG_DATA_DIRS again")
    check_blind(r, mnt, "3. after disable")
    os.unlink(path)

    # 4. changed by the user after enable: only iconfs's entries go
    iconfs(env, "enable", APP)
    sh("flatpak", "override", "--user", "--env=BAR=1", APP, env=env)
    p = iconfs(env, "disable", APP)
    check_eq(p.returncode, 0, "4. disable exits 0")
    check("changed since 'iconfs flatpak enable'" in p.stderr, "4. disable says the file changed")
    check_eq(read_or_none(path), b"[Environment]\nBAR=1\n", "4. only the user's key is left")
    os.unlink(path)

    # 5. --all
    p = iconfs(env, "enable", "--all")
    check_eq(p.returncode, 0, "5. enable --all exits 0")
    check_eq(read_or_none(path), want, "5. enable --all: the app's override")
    other_dirs = OTHER_DIRS.replace(":/run/host/share", f":{mnt}:/run/host/share")
    check_eq(read_or_none(other_path), (f"[Context]\nfilesystems=xdg-run/iconfs:ro;\n\n"
                                f"[Environment]\nXDG_DATA_DIRS={other_dirs}\n").encode(),
             "5. enable --all: the other app's, from its metadata's XDG_DATA_DIRS")
    st = {k: v for k, v in status_lines(env).items() if k in (APP, OTHER)}
    check_eq(st, {APP: "sees the mount (enabled by iconfs)",
                  OTHER: "sees the mount (enabled by iconfs)"}, "5. status, one line per app")
    r = run_app(OTHER, mnt, env, "5. other app enabled")
    check_eq(r.get("XDG_DATA_DIRS"), other_dirs, "5. the other app's XDG_DATA_DIRS inside")
    check_sees(r, mnt, "5. other app enabled")
    p = iconfs(env, "disable", "--all")
    check_eq(p.returncode, 0, "5. disable --all exits 0")
    check_eq((read_or_none(path), read_or_none(other_path)), (None, None), "5. disable --all leaves no override")
    st = {k: v for k, v in status_lines(env).items() if k in (APP, OTHER)}
    check(all(v.startswith("does not see the mount") for v in st.values()) and len(st) == 2,
          f"5. status after disable --all: {st}")

    # 6. errors: one line naming the cause
    p = iconfs(env, "enable", "org.iconfs.Test.Nope")
    check_eq((p.returncode, p.stderr),
             (1, "iconfs: unknown Flatpak app 'org.iconfs.Test.Nope': not installed\n"),
             "6. an unknown app")
    check_eq(read_or_none(os.path.join(over, "org.iconfs.Test.Nope")), None, "6. no override for it")
    p = iconfs(dict(env, PATH="/nonexistent"), "status")
    check_eq((p.returncode, p.stderr), (1, "iconfs: flatpak is not installed: cannot run "
                                           "'flatpak'\n"), "6. flatpak missing")
    for args, msg in ((("enable",), "'iconfs flatpak enable' takes app IDs or --all"),
                      (("enable", "--all", APP), "--all and app IDs exclude each other"),
                      (("frob",), "unknown flatpak command 'frob' (enable, disable or status)"),
                      (("enable", "../x"), "invalid Flatpak app ID '../x'")):
        p = iconfs(env, *args)
        check_eq((p.returncode, p.stderr.splitlines()[:1]), (2, [f"iconfs: {msg}"]),
                 f"6. usage: {' '.join(args)}")


def main():
    need_fuse()
    need_theme("Adwaita")
    for tool in ("flatpak", "bwrap"):
        if not shutil.which(tool):
            fail(f"{tool} is not installed (scripts/setup installs flatpak, which brings "
                 "bubblewrap)")
    p = subprocess.run(["bwrap", "--ro-bind", "/", "/", "--unshare-user", "--unshare-pid",
                        "--proc", "/proc", "--dev", "/dev", "true"], capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"bubblewrap cannot make a sandbox here (unprivileged user namespaces?): "
             f"{p.stderr.strip()}")
    t0 = time.monotonic()
    work = tempfile.mkdtemp(prefix="flatpak-", dir=os.environ.get("ICONFS_TEST_DIR"))
    try:
        with timed("Debian tree"):
            root = tree_root(work)
        home = os.path.join(work, "home")
        env = dict(os.environ, HOME=home, XDG_DATA_HOME=f"{home}/.local/share",
                   XDG_CONFIG_HOME=f"{home}/.config", XDG_CACHE_HOME=f"{home}/.cache",
                   XDG_STATE_HOME=f"{home}/.local/state", LC_ALL="C.UTF-8")
        env.pop("FLATPAK_USER_DIR", None)
        if not os.path.exists("/run/dbus/system_bus_socket"):
            # no system bus (a container): flatpak's own tests' switch,
            # which skips the parental-controls query over it on install
            env["FLATPAK_SYSTEM_HELPER_ON_SESSION"] = "1"
        os.makedirs(home)
        # the tree is not rebuilt while its files are copied
        lock = open(os.path.join(os.path.dirname(root), "lock"))
        fcntl.flock(lock, fcntl.LOCK_SH)
        try:
            build_and_install(root, work, env)
        finally:
            lock.close()
        # the default mountpoint: the only place xdg-run/iconfs reaches
        mnt = os.path.join(os.environ["XDG_RUNTIME_DIR"], "iconfs")
        t1 = time.monotonic()
        with mounted(os.path.join(work, "index.sqlite"), REAL_BASES, mountpoint=mnt):
            timings["index and mount"] = time.monotonic() - t1
            with timed("checks"):
                scenarios(env, os.path.realpath(mnt),
                          os.path.join(env["XDG_STATE_HOME"], "iconfs", "flatpak"))
    finally:
        for app in (APP, OTHER):  # what flatpak run made
            shutil.rmtree(os.path.join(os.environ["XDG_RUNTIME_DIR"], "app", app),
                          ignore_errors=True)
        if os.environ.get("ICONFS_KEEP_FLATPAK") != "1":
            # an installation's files are read-only
            subprocess.run(["chmod", "-R", "u+w", work], capture_output=True)
            shutil.rmtree(work, ignore_errors=True)
        else:
            say(f"kept {work}")
    timings["total"] = time.monotonic() - t0
    say("timings: " + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items()))
    finish()


if __name__ == "__main__":
    main()
