#!/usr/bin/env python3
"""`iconfs lookup --rules spec` (the specification as written) against
an independent reading of the specification (spec_reference.py) on the
real Debian themes: random names from each theme (seeded), plus names that
exist nowhere, at many sizes and both scales. (The gtk and kde rules are
judged by the real toolkits: test_fidelity.py, test_conformance.py.)"""
import os
import random

from common import REAL_BASES, check, finish, lookup_batch, need_theme, shared_db
from spec_reference import Spec

THEMES = ["Papirus", "breeze", "Adwaita", "oxygen", "hicolor", "Papirus-Dark"]
SIZES = [8, 16, 20, 22, 24, 32, 40, 48, 64, 96, 128, 256, 512]
need_theme(*THEMES)

db = shared_db("real-index.sqlite")
spec = Spec(REAL_BASES.split(":"))
rng = random.Random(20261130)
compared = 0
for theme in THEMES:
    names = set()
    for root, _, files in os.walk(f"/usr/share/icons/{theme}", followlinks=True):
        for f in files:
            stem, _, ext = f.rpartition(".")
            if ext in ("png", "svg", "xpm") and stem:
                names.add(stem)
    sample = rng.sample(sorted(names), min(120, len(names))) + ["no-such-icon-xyz", "Firefox"]
    for scale in (1, 2):
        queries = [(n, rng.choice(SIZES)) for n in sample]
        got = lookup_batch(db, REAL_BASES, theme, queries, scale, rules="spec")
        for (n, s), path in zip(queries, got):
            want = spec.find_icon(n, s, scale, theme)
            check(path == want, f"{theme} {n} {s}@{scale}: iconfs {path}, reference {want}")
            compared += 1
print(f"{compared} lookups compared")
check(compared > 1000, "enough lookups compared")
finish()
