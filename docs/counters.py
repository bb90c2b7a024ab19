#!/usr/bin/python3
"""Print the man page source (argv[1], scdoc) with its @COUNTERS@ line
replaced by the list of the daemon's counters, made from the table
FS_COUNTERS of fs/counters.h (argv[2]): one row per line, REQUEST(name,
"help") or VALUE(name, value, "help")."""
import re
import sys

ROW = re.compile(r'^\s*(?:REQUEST|VALUE)\((\w+),.*"([^"]*)"\)\s*\\?$')


def rows(header):
    with open(header) as f:
        found = [m.groups() for m in map(ROW.match, f) if m]
    if not found:
        sys.exit(f"{header}: no FS_COUNTERS rows")
    return found


def main():
    page, header = sys.argv[1], sys.argv[2]
    items = "\n".join(f"\t- *{name}*: {help}." for name, help in rows(header))
    with open(page) as f:
        text = f.read()
    if text.count("@COUNTERS@\n") != 1:
        sys.exit(f"{page}: needs one @COUNTERS@ line")
    sys.stdout.write(text.replace("\t@COUNTERS@\n", items + "\n"))


main()
