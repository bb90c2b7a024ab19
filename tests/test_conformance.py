#!/usr/bin/env python3
"""Spec conformance on the fixture themes in tests/data/spec: each rule of
the design's Lookup section has rows in expected.txt with the one path the
specification picks, and `iconfs lookup` must print exactly that."""
import collections
import os
import tempfile

from common import DATA, SPEC_BASES, check, check_eq, finish, lookup_batch, run

spec = os.path.join(DATA, "spec")
rows = []
with open(os.path.join(spec, "expected.txt")) as f:
    for line in f:
        line = line.strip()
        if line and not line.startswith("#"):
            theme, name, size, scale, want = line.split("|")
            rows.append((theme, name, int(size), int(scale), want))
check(len(rows) >= 30, "expected.txt has the conformance rows")

with tempfile.TemporaryDirectory() as tmp:
    db = os.path.join(tmp, "index.sqlite")
    p = run("index", "--db", db, "--icon-dirs", SPEC_BASES)
    check_eq(p.returncode, 0, "index exit status")
    # each problem is named in one line
    for needle in ("garbage/index.theme", "empty/index.theme",
                   "escape.png' points outside", "'nosize' has no valid Size",
                   "crlf/index.theme:4"):
        check(needle in p.stderr, f"index names problem '{needle}'")

    groups = collections.defaultdict(list)
    for r in rows:
        groups[(r[0], r[3])].append(r)
    for (theme, scale), group in groups.items():
        got = lookup_batch(db, SPEC_BASES, theme, [(r[1], r[2]) for r in group], scale)
        for r, path in zip(group, got):
            rel = os.path.relpath(path, spec) if path else "NONE"
            check_eq(rel, r[4], f"lookup --theme {theme} --scale {scale} {r[1]} {r[2]}")

    # the single-query form and its exit status
    p = run("lookup", "--db", db, "--icon-dirs", SPEC_BASES, "--theme", "child", "deep", "16")
    check_eq((p.returncode, p.stdout.strip()),
             (0, os.path.join(spec, "base1/gp/d/deep.png")), "lookup child deep 16")
    p = run("lookup", "--db", db, "--icon-dirs", SPEC_BASES, "--theme", "child", "nope", "16")
    check_eq((p.returncode, p.stdout), (1, ""), "lookup of a missing name")
finish()
