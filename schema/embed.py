#!/usr/bin/env python3
"""Turn the numbered SQL migrations into a C array, in file-name order."""
import sys

out, sources = sys.argv[1], sorted(sys.argv[2:])
with open(out, "w") as f:
    f.write("/* generated from the schema migrations; do not edit */\n")
    f.write('#include "schema.h"\n\n')
    f.write("const char *const schema_migrations[] = {\n")
    for path in sources:
        text = open(path, encoding="utf-8").read()
        f.write("\t/* %s */\n\t\"" % path.rsplit("/", 1)[-1])
        for ch in text:
            if ch == "\\" or ch == '"':
                f.write("\\" + ch)
            elif ch == "\n":
                f.write('\\n"\n\t"')
            elif ch == "\t":
                f.write("\\t")
            else:
                f.write(ch)
        f.write('",\n')
    f.write("};\n\nconst unsigned schema_migrations_count = %d;\n" % len(sources))
