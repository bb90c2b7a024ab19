#!/usr/bin/env python3
"""Browsing a large directory like a native one: a size view of 20,000
icons (PNGs of the exact size, so nothing is rendered) listed with their
attributes twice through a real mount. Once a program stats entries, the
listing's READDIRPLUS replies carry the attributes (no LOOKUP each); the
node table holds them all: the second listing sends no LOOKUP to the daemon
(its counters), even after the table's periodic bound check; sizes equal
the bytes served; d_ino equals st_ino; `ls -l` asks the first file only for
its SELinux label and ACL (only "user." attributes exist).

Browsing renders nothing by itself: a theme of 20,000 SVGs is walked by
`find` over the whole mount and listed by `ls`: 0 renders, the table of
renders unchanged; `ls -l` then renders each icon of a view once, ahead of
its stats on every worker, and a second `ls -l` renders nothing. With a
small budget, renders that only answered a stat are evicted before the
ones programs read. The learned working set survives a `find`."""
import errno
import os
import subprocess
import tempfile
import time

from common import check, check_eq, counters, finish, mounted, png16, run

N = 20000


def listing(d):
    """What `ls -l` asks: every entry and its attributes."""
    out = {}
    with os.scandir(d) as it:
        for e in it:
            st = e.stat(follow_symlinks=False)
            out[e.name] = (e.inode(), st.st_ino, st.st_size)
    return out


with tempfile.TemporaryDirectory() as tmp:
    base = os.path.join(tmp, "icons")
    d16 = os.path.join(base, "many", "16")
    os.makedirs(d16)
    with open(os.path.join(base, "many", "index.theme"), "w") as f:
        f.write("[Icon Theme]\nName=Many\nDirectories=16\n\n[16]\nSize=16\nType=Fixed\n")
    data = png16()
    for i in range(N):
        with open(os.path.join(d16, f"icon-{i:05d}.png"), "wb") as f:
            f.write(data)
    db = os.path.join(tmp, "index.sqlite")
    run("index", "--db", db, "--icon-dirs", base, check_rc=0)
    with mounted(db, base, theme="many", settled=True) as mnt:
        view = os.path.join(mnt, "icons/many/16x16")
        t0 = time.monotonic()
        first = listing(view)
        t1 = time.monotonic()
        c1 = counters(mnt)
        check_eq(len(first), N, "the size view lists every icon")
        # the first reply has no attributes for files (nobody stat'ed one
        # yet): those few are looked up, and then every reply has them
        check(c1["lookups"] < 300 and c1["dirplus"] >= N - 300,
              f"READDIRPLUS gave the entries' attributes ({c1['dirplus']}), "
              f"no LOOKUP each ({c1['lookups']})")
        check(c1["nodes"] > N, f"the node table holds them all ({c1['nodes']} nodes, "
              f"{c1['node_bytes'] / 2**20:.1f} MiB)")
        time.sleep(2.5)  # past the table's bound check
        t2 = time.monotonic()
        second = listing(view)
        t3 = time.monotonic()
        c2 = counters(mnt)
        print(f"listing {N} entries: first {t1 - t0:.2f} s ({c1['lookups']} lookups, "
              f"{c1['dirplus']} entries with attributes in READDIRPLUS), "
              f"second {t3 - t2:.2f} s ({c2['lookups'] - c1['lookups']} lookups), "
              f"{c2['node_bytes'] / c2['nodes']:.0f} bytes per node")
        check_eq(c2["lookups"] - c1["lookups"], 0, "the second listing sends no LOOKUP")
        check_eq(c2["invalidations"], 0, "nothing evicted")
        check_eq(first, second, "both listings agree")
        bad_ino = [n for n, (d_ino, st_ino, _) in second.items() if d_ino != st_ino]
        check_eq(bad_ino[:5], [], "d_ino equals st_ino")
        sizes = [(n, size) for n, (_, _, size) in sorted(second.items())[::97]]
        wrong = [n for n, size in sizes if len(open(os.path.join(view, n), "rb").read()) != size]
        check_eq(wrong, [], f"st_size equals the bytes served ({len(sizes)} sampled)")
        check_eq(counters(mnt)["renders"], 0, "PNGs of the exact size render nothing")

        # ls -l itself asks every file for its SELinux label and ACL; only
        # "user." attributes exist here, so it stops after the first file
        one = os.path.join(view, "icon-00042.png")
        # (trusted.* is the kernel's own answer for a user: ENODATA)
        for attr, want in (("security.selinux", errno.EOPNOTSUPP),
                           ("system.posix_acl_access", errno.EOPNOTSUPP),
                           ("trusted.x", errno.EOPNOTSUPP if os.geteuid() == 0 else errno.ENODATA)):
            try:
                os.getxattr(one, attr)
                check(False, f"{attr} has no value")
            except OSError as e:
                check_eq(e.errno, want, f"{attr}: not supported here")
        check_eq(os.getxattr(one, "user.iconfs.source").decode(),
                 os.path.join(d16, "icon-00042.png"), "user.iconfs.source still answered")
        x0 = counters(mnt)
        for _ in range(2):
            out = subprocess.run(["ls", "-l", view], capture_output=True, text=True)
            check_eq((out.returncode, out.stderr, len(out.stdout.splitlines())), (0, "", N + 1),
                     "ls -l lists every icon, without an error")
        x1 = counters(mnt)
        print(f"two ls -l of {N} entries: {x1['getxattrs'] - x0['getxattrs']} getxattr, "
              f"{x1['lookups'] - x0['lookups']} lookups, {x1['getattrs'] - x0['getattrs']} getattrs, "
              f"{x1['readdirs'] - x0['readdirs']} listings read again")
        check(x1["getxattrs"] - x0["getxattrs"] <= 4,
              f"ls -l stops asking for labels and ACLs after the first file "
              f"({x1['getxattrs'] - x0['getxattrs']} getxattr for two listings)")
        check_eq(x1["lookups"] - x0["lookups"], 0, "ls -l of a listed view sends no LOOKUP")

    # 200 SVGs: listing the 24x24 view renders nothing; the first stat
    # starts their renders on every worker; the stats that follow wait for
    # them, nothing renders twice
    svgs = os.path.join(base, "svgs", "scalable")
    os.makedirs(svgs)
    with open(os.path.join(base, "svgs", "index.theme"), "w") as f:
        f.write("[Icon Theme]\nName=S\nDirectories=scalable\n\n[scalable]\nSize=16\n"
                "Type=Scalable\nMinSize=1\nMaxSize=512\n")
    for i in range(200):
        with open(os.path.join(svgs, f"s{i:03d}.svg"), "w") as f:
            f.write(f'<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16">'
                    f'<rect width="16" height="{i % 16 + 1}" fill="red"/></svg>')
    run("index", "--db", db, "--icon-dirs", base, check_rc=0)
    with mounted(db, base, theme="svgs", settled=True) as mnt:
        view = os.path.join(mnt, "icons/svgs/24x24")
        names = os.listdir(view)
        time.sleep(1)
        check_eq(counters(mnt)["renders"], 0, "a listing renders nothing")
        os.stat(os.path.join(view, names[0]))
        t0 = time.monotonic()
        while counters(mnt)["renders"] < 200 and time.monotonic() - t0 < 60:
            time.sleep(0.05)
        ahead = counters(mnt)["renders"]
        sized = [os.stat(os.path.join(view, n)).st_size > 0 for n in names]
        c = counters(mnt)
        print(f"200 SVGs listed: {ahead} rendered ahead of the stats in {time.monotonic() - t0:.2f} s")
        check_eq((len(names), all(sized)), (200, True), "every listed icon has its size")
        check_eq(ahead, 200, "the first stat rendered the view ahead of the others")
        check_eq(c["renders"], 200, "nothing rendered twice")
        check(c["resolved_ahead"] > 0,
              f"stats took what the listing's prefetch resolved ({c['resolved_ahead']})")
finish()
