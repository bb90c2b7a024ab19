"""Shared helpers of the Python tests: running iconfs, mounting it on a
temporary directory (always unmounted again), PNG headers, skips."""
import contextlib
import errno
import os
import re
import select
import shutil
import socket
import sqlite3
import struct
import subprocess
import sys
import tempfile
import time
import zlib

import asuser

# Every test runs as an unprivileged user (asuser.py), as users do; only a
# test registered as needing root (ICONFS_TEST_AS_ROOT) stays root.
if os.environ.get("ICONFS_TEST_AS_ROOT") != "1" and os.geteuid() == 0:
    _dir = os.path.join(os.environ.get("ICONFS_TEST_DIR") or tempfile.gettempdir(), "as-user")
    asuser.drop(writable=[_dir])
    os.environ["ICONFS_TEST_DIR"] = _dir

ICONFS = os.environ.get("ICONFS") or os.path.join(
    os.path.dirname(__file__), "..", "build", "cli", "iconfs")
# an ASan/UBSan build (scripts/test --sanitize): its shadow memory and
# quarantine of freed blocks are counted in the daemon's RSS
try:
    with open(ICONFS, "rb") as _f:
        SANITIZED = b"__asan_init" in _f.read()
except OSError:
    SANITIZED = False
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
SPEC_BASES = ":".join(os.path.join(DATA, "spec", d) for d in ("base1", "base2", "pixmaps"))
REAL_BASES = "/usr/share/icons:/usr/share/pixmaps"
SKIP = 77

failures = 0


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(SKIP)


def need_fuse():
    if not os.path.exists("/dev/fuse") or not shutil.which("fusermount3"):
        skip("no /dev/fuse or fusermount3")


def need_theme(*names):
    for n in names:
        if not os.path.isfile(f"/usr/share/icons/{n}/index.theme"):
            skip(f"icon theme '{n}' is not installed (run scripts/setup)")


def check(cond, what):
    """Record one assertion; the test fails at the end if any failed."""
    global failures
    if not cond:
        failures += 1
        print(f"FAIL: {what}", flush=True)
    return cond


def check_eq(got, want, what):
    return check(got == want, f"{what}: got {got!r}, want {want!r}")


def finish():
    if failures:
        print(f"{failures} check(s) failed")
        sys.exit(1)
    print("ok")
    sys.exit(0)


def run(*args, input=None, check_rc=None, env=None):
    p = subprocess.run([ICONFS, *args], input=input, capture_output=True,
                       text=True, env=env)
    if check_rc is not None and p.returncode != check_rc:
        raise AssertionError(f"iconfs {' '.join(args)} exited {p.returncode}: {p.stderr}")
    return p


def lookup_batch(db, bases, theme, queries, scale=1, rules="gtk"):
    """queries: list of (name, size); returns the list of paths (None for
    none), by the rules a mount follows by default ("spec": the
    specification as written)."""
    text = "".join(f"{n} {s}\n" for n, s in queries)
    p = run("lookup", "--batch", "--db", db, "--icon-dirs", bases, "--theme", theme,
            "--scale", str(scale), "--rules", rules, input=text, check_rc=0)
    out = p.stdout.split("\n")[:len(queries)]
    return [o or None for o in out]


def symlink_farm(dst, themes, with_cache=True):
    """The installed `themes` again under `dst`: index.theme and other files
    copied, subdirectories as symlinks to the real ones (so the same icons,
    and without icon-theme.cache when with_cache is False)."""
    for t in themes:
        src = f"/usr/share/icons/{t}"
        os.makedirs(os.path.join(dst, t))
        for e in os.listdir(src):
            if e == "icon-theme.cache" and not with_cache:
                continue
            s = os.path.join(src, e)
            if os.path.isdir(s):
                os.symlink(os.path.realpath(s), os.path.join(dst, t, e))
            else:
                shutil.copy(s, os.path.join(dst, t, e))


def write_atomic(path, data):
    """Write `data` (str or bytes) to `path` as an editor or a package
    manager does: a temporary file renamed over it."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp~"
    with open(tmp, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)
    os.rename(tmp, path)


def read_or_none(path):
    """The bytes of `path`, or None where it cannot be read (gone, or a
    moment between a rename and its new name)."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def svg_square(color="red", height=16):
    """A 16-px-wide SVG: a rectangle of `color` and `height`."""
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16">'
            f'<rect width="16" height="{height}" fill="{color}"/></svg>')


def scalable_theme(base, name, max_size=512):
    """Theme `name` under `base` with one Scalable directory, scalable/
    (Size 16, MinSize 1); returns that directory's path."""
    d = os.path.join(base, name, "scalable")
    os.makedirs(d)
    with open(os.path.join(base, name, "index.theme"), "w") as f:
        f.write(f"[Icon Theme]\nName={name}\nDirectories=scalable\n\n[scalable]\n"
                f"Size=16\nType=Scalable\nMinSize=1\nMaxSize={max_size}\n")
    return d


SQUARE_COLORS = ["red", "green", "blue", "yellow", "navy", "teal", "olive", "maroon",
                 "purple", "gray", "lime", "aqua"]


def squares_theme(base, name, n):
    """A scalable theme (scalable_theme) of `n` SVGs sq-00 … that all
    differ (colour and height); returns its directory."""
    d = scalable_theme(base, name)
    for i in range(n):
        with open(os.path.join(d, f"sq-{i:02d}.svg"), "w") as f:
            f.write(svg_square(SQUARE_COLORS[i % len(SQUARE_COLORS)], 4 + i))
    return d


def fill_disk(path):
    """Fill the filesystem holding `path` with one file until it is full.
    Unbuffered writes on a raw fd: ENOSPC is the expected end, and nothing
    is left in a buffer to be flushed (and fail) later."""
    chunk = b"\0" * 65536
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        while True:
            try:
                n = os.write(fd, chunk)
            except OSError as e:
                if e.errno != errno.ENOSPC:
                    raise
                # the last partial block: fill it in small pieces
                if len(chunk) == 1:
                    break
                chunk = chunk[:len(chunk) // 2]
                continue
            if n == 0:
                break
    finally:
        os.close(fd)


def errno_of(fn):
    """The errno fn() fails with, 0 when it succeeds."""
    try:
        fn()
    except OSError as e:
        return e.errno
    return 0


def is_symbolic(name):
    """Names never served as a plain PNG under icons/ (fs/view.c)."""
    if name.endswith(".symbolic"):
        name = name[:-len(".symbolic")]
    return name.endswith(("-symbolic", "-symbolic-ltr", "-symbolic-rtl"))


def png_size(data):
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", data[16:24])


def png16():
    """A 16×16 PNG (one colour), made without any imaging library."""
    raw = b"".join(b"\0" + b"\x20\x40\x80\xff" * 16 for _ in range(16))

    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 16, 16, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def shared_db(name):
    """A database file shared by the tests of one build (indexing real themes
    once); kept beside the build's test logs."""
    d = os.environ.get("ICONFS_TEST_DIR") or tempfile.gettempdir()
    return os.path.join(d, name)


def forget_working_set(db):
    """Empty what a mount of `db` reads ahead (fs/warm.h): the next mount
    starts with the kernel's caches cold, as a first login does."""
    if not os.path.exists(db):
        return
    with sqlite3.connect(db) as c:
        try:
            c.execute("DELETE FROM warm")
        except sqlite3.OperationalError:
            pass  # an index of before the working set


def in_mountinfo(mnt):
    """Whether something is mounted on `mnt` (this process's mount table;
    a mount whose daemon died answers ENOTCONN until it is unmounted, and
    os.path.ismount already says no to it)."""
    with open("/proc/self/mountinfo") as f:
        return any(line.split()[4] == mnt for line in f)


def wait_gone(mnt, limit=10):
    """Seconds until `mnt` leaves the mount table (limit when it stays)."""
    t0 = time.monotonic()
    while in_mountinfo(mnt) and time.monotonic() - t0 < limit:
        time.sleep(0.01)
    return time.monotonic() - t0


def wait_for(fn, limit):
    """Seconds until fn() is true, looked at every 0.1 s; None when it is
    not within `limit`."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        if fn():
            return time.monotonic() - t0
        time.sleep(0.1)
    return None


def counters(mnt):
    raw = os.getxattr(mnt, "user.iconfs.counters").decode()
    return {k: int(v) for k, v in (l.split() for l in raw.strip().split("\n"))}


def cmdline_of(pid):
    """Process `pid`'s command line, split; [] once it is gone."""
    try:
        return open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
    except OSError:
        return []


def shared_objects(pid):
    """The shared objects process `pid` maps, by file name, less what a
    sanitizer build adds to every program: its runtimes and what they
    load (the C library excepted, which every program needs itself)."""
    with open(f"/proc/{pid}/maps") as f:
        paths = {os.path.realpath(l.split()[5]) for l in f
                 if len(l.split()) > 5 and ".so" in l.split()[5]}
    added = set()
    for path in paths:
        if re.match(r"lib(asan|ubsan)\.so", os.path.basename(path)):
            ldd = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
            added |= {path, *map(os.path.realpath, re.findall(r"=> (/\S+)", ldd))}
    names = {os.path.basename(p) for p in paths - added}
    return sorted(names | ({"libc.so.6"} & {os.path.basename(p) for p in paths}))


def daemons(mnt):
    """The pids of iconfs processes serving `mnt` (not fusermount3, nor a
    helper the daemon is spawning, which has its command line until its
    exec)."""
    found = {}
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            with open(f"/proc/{pid}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if argv[0].endswith(b"iconfs") and b"mount" in argv and mnt.encode() in argv:
            found[int(pid)] = ppid
    return sorted(pid for pid, ppid in found.items() if ppid not in found)


@contextlib.contextmanager
def mounted(db, bases, theme=None, extra=(), timeout=120, settled=False, mountpoint=None,
            env=None):
    """Run `iconfs mount -f` (in environment `env`, else this one's) on a
    fresh temporary directory (or on `mountpoint`, made if missing and
    removed again if so); yield the mount point. Waits for the mount while checking that the daemon lives (with
    `settled`, also for the watcher's start-up, which runs at idle priority
    and may otherwise land in the middle of a test); always unmounts and
    reaps the daemon."""
    need_fuse()
    tmp = tempfile.mkdtemp(prefix="iconfs-mnt-")
    mnt = mountpoint or os.path.join(tmp, "mnt")
    made = not os.path.isdir(mnt)
    if made:
        os.mkdir(mnt)
    args = [ICONFS, "mount", "-f", "--db", db, "--icon-dirs", bases]
    if theme:
        args += ["--theme", theme]
    if "--shared-db" not in extra:
        args.append("--no-shared-db")  # a machine's own layer stays out
    log = open(os.path.join(tmp, "daemon.log"), "w+")
    # as a login's unit (Type=notify) starts the session: at the daemon's
    # READY=1, not at the next look at the mount table
    ready = None
    if "NOTIFY_SOCKET" not in (os.environ if env is None else env):
        ready = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        ready.bind(os.path.join(tmp, "notify"))
        env = dict(os.environ if env is None else env, NOTIFY_SOCKET=ready.getsockname())
    proc = subprocess.Popen([*args, *extra, mnt], stdout=log, stderr=log, env=env)
    mounted.pid = proc.pid
    mounted.log_path = log.name
    try:
        deadline = time.monotonic() + timeout
        # at READY=1, which the daemon sends once mounted, before its index
        # is refreshed (its first answers wait for that in the kernel: a
        # look at the mount, as os.path.ismount takes, would wait too)
        said = False
        while not (said if ready else os.path.ismount(mnt)):
            if proc.poll() is not None:
                log.seek(0)
                raise AssertionError(f"daemon exited {proc.returncode}: {log.read()}")
            if time.monotonic() > deadline:
                raise AssertionError("mount did not appear")
            if not ready:
                time.sleep(0.05)
            elif select.select([ready], [], [], 0.05)[0]:
                said = b"READY=1" in ready.recv(4096).split(b"\n")
        while settled and not counters(mnt)["watch_ready"]:
            if time.monotonic() > deadline:
                raise AssertionError("the watcher did not start")
            time.sleep(0.05)
        yield mnt
    finally:
        subprocess.run(["fusermount3", "-uz", mnt], capture_output=True)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.seek(0)
        text = log.read()
        if text.strip():
            print("daemon log:\n" + text[-4000:])
        log.close()
        if ready:
            ready.close()
        shutil.rmtree(tmp, ignore_errors=True)
        if mountpoint and made:
            try:
                os.rmdir(mnt)
            except OSError:
                pass
