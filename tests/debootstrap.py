"""A cached Debian tree made with debootstrap, for the tests that need one
(test_login.py boots one as its box, test_flatpak.py makes a Flatpak
runtime of its /usr) and for building the package in a clean chroot
(`scripts/package --chroot`, which runs `python3 tests/debootstrap.py
build BOX SRC`). Not a test: a module they import, run as root.

A tree lives in a folder of its own under the build directory (BOX/root),
beside its stamp (the suite, the mirror, the variant and the package list
it was made of), a lock and the last debootstrap's log. It is made again
when the stamp differs, in a temporary directory renamed when complete,
so that a killed build never leaves half a tree where a whole one is
looked for; the leftovers of one are removed by the next.
"""
import fcntl
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time


def codename():
    """This Debian's suite (bookworm when /etc/os-release does not say)."""
    with open("/etc/os-release") as f:
        for line in f:
            if line.startswith("VERSION_CODENAME="):
                return line.split("=", 1)[1].strip().strip('"') or "bookworm"
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


def remove_tree(path):
    """rm -rf that never leaves the tree's filesystem."""
    subprocess.run(["rm", "-rf", "--one-file-system", path], capture_output=True)


def ensure(box, packages, lock, what):
    """The cached tree box/root, debootstrapped (minbase) with `packages`
    (the stamp lists them in this order); (path, seconds spent building,
    0 when cached). Built under an exclusive lock on `lock` (an open file),
    which is left shared: a caller that uses the tree keeps another from
    rebuilding it under it. `what` names the tree in the lines printed
    when it is built. AssertionError when it cannot be made."""
    os.makedirs(box, exist_ok=True)
    suite = codename()
    url = mirror(suite)
    want = f"suite {suite}\nmirror {url}\nvariant minbase\n" + "\n".join(packages) + "\n"
    fcntl.flock(lock, fcntl.LOCK_EX)  # one build at a time, none while in use
    try:
        return _build(box, want, suite, url, packages, what)
    finally:
        fcntl.flock(lock, fcntl.LOCK_SH)


def _build(box, want, suite, url, packages, what):
    """ensure under its lock: debootstrap when the stamp differs."""
    root, stamp = os.path.join(box, "root"), os.path.join(box, "stamp")
    for e in os.listdir(box):  # what a killed build left
        if e.startswith(("root.tmp-", "root.old-")):
            remove_tree(os.path.join(box, e))
    try:
        have = open(stamp).read()
    except OSError:
        have = None
    if have == want and os.path.isdir(root):
        return root, 0.0
    print(f"building {what}: debootstrap {suite} from {url} "
          f"({len(packages)} packages and their dependencies)", flush=True)
    if not shutil.which("debootstrap"):
        raise AssertionError("debootstrap is not installed (scripts/setup installs it)")
    t0 = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="root.tmp-", dir=box)
    os.chmod(tmp, 0o755)
    log = os.path.join(box, "debootstrap.log")
    with open(log, "w") as f:
        # in a mount namespace of its own: the target's /proc and /sys go
        # with it, even when it is killed (a process group of its own: an
        # interrupted build ends all of it)
        p = subprocess.Popen(["unshare", "--mount", "--propagation", "private",
                              "debootstrap", "--variant=minbase",
                              "--include=" + ",".join(packages), suite, tmp, url],
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
        raise AssertionError(f"debootstrap {suite} {url} exited {p.returncode}:\n{tail}")
    archives = os.path.join(tmp, "var/cache/apt/archives")
    for e in os.listdir(archives):
        if e.endswith(".deb"):
            os.unlink(os.path.join(archives, e))
    if os.path.exists(stamp):
        os.unlink(stamp)
    if os.path.isdir(root):
        old = tempfile.mkdtemp(prefix="root.old-", dir=box)
        os.rename(root, os.path.join(old, "root"))
        remove_tree(old)
    os.rename(tmp, root)
    with open(stamp + ".tmp", "w") as f:
        f.write(want)
    os.rename(stamp + ".tmp", stamp)
    took = time.monotonic() - t0
    print(f"{what} built in {took:.0f} s", flush=True)
    return root, took


# ------------------------------------------------- the package's build chroot

def dep_names(field):
    """The package names of a dependency field's value: the first of each
    alternative, without versions, architectures or build profiles."""
    names = []
    for dep in field.split(","):
        name = re.split(r"[\s(\[<|:]", dep.strip(), maxsplit=1)[0]
        if name:
            names.append(name)
    return names


def build_depends(control):
    """The Build-Depends of a debian/control, as package names to install
    (the first of each alternative, without versions or profiles;
    debhelper-compat is debhelper's), with build-essential, which a build
    chroot has by definition (Debian Policy 4.2)."""
    text = open(control).read()
    m = re.search(r"^Build-Depends(?:-Arch|-Indep)?:(.*?)(?=^\S|\Z)", text, re.M | re.S)
    names = {"debhelper" if n == "debhelper-compat" else n
             for n in dep_names(m.group(1) if m else "")}
    return sorted(names | {"build-essential"})


def build_in_chroot(box, src):
    """dpkg-buildpackage -b -us -uc of the source tree `src` inside the
    cached chroot box/root, made with debootstrap (minbase) and the tree's
    Build-Depends only, as sbuild and pbuilder build: a dependency missing
    from debian/control fails here. The chroot's / is not a mount point and
    it has no /dev/fuse, no systemd and no network use; /proc is mounted in
    a mount namespace of the build's own. The results (.deb, .changes,
    .buildinfo) land beside `src`, as dpkg-buildpackage leaves them; the
    exit status is the build's."""
    src = os.path.abspath(src)
    os.makedirs(box, exist_ok=True)
    lock = open(os.path.join(box, "lock"), "w")
    root, _ = ensure(box, build_depends(os.path.join(src, "debian", "control")), lock,
                     "the package's build chroot")
    # a directory of this build's own: two builds may share the tree
    os.makedirs(os.path.join(root, "build"), exist_ok=True)
    work = tempfile.mkdtemp(prefix="iconfs-", dir=os.path.join(root, "build"))
    try:
        inside = os.path.join(work, os.path.basename(src))
        shutil.copytree(src, inside, symlinks=True)
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/nonexistent",
               "LC_ALL": "C.UTF-8", "TERM": "dumb",
               "DEB_BUILD_OPTIONS": os.environ.get("DEB_BUILD_OPTIONS", "")}
        rel = "/" + os.path.relpath(inside, root)
        script = ('mount -t proc proc "$1/proc" && '
                  'exec chroot "$1" sh -c \'cd "$1" && dpkg-buildpackage -b -us -uc -Jauto\' sh "$2"')
        rc = subprocess.run(["unshare", "--mount", "--propagation", "private",
                             "sh", "-c", script, "sh", root, rel],
                            env=env, stdin=subprocess.DEVNULL).returncode
        for f in glob.glob(os.path.join(work, "*")):
            if f.endswith((".deb", ".changes", ".buildinfo")):
                shutil.move(f, os.path.dirname(src))
        return rc
    finally:
        remove_tree(work)


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] != "build":
        sys.exit("usage: debootstrap.py build BOX SRC")
    try:
        sys.exit(build_in_chroot(sys.argv[2], sys.argv[3]))
    except AssertionError as e:
        sys.exit(f"package: {e}")
