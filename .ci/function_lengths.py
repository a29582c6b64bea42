#!/usr/bin/env python3
"""List Rust functions longer than a limit (default 80 lines), per file.

Usage: .ci/function_lengths.py [LIMIT] [PATH...]   (default PATH: crates)

A function's length counts from its `fn` line to the line of its closing
brace. Strings, chars and comments are skipped when braces are counted, so
a `{` inside a format string does not open a block.
"""
import os
import re
import sys

FN = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+\"[^\"]*\"\s+)?fn\s+([A-Za-z_][A-Za-z0-9_]*)")


def strip(line, state):
    """Returns the line without strings, chars and comments; state carries
    block comments and raw/normal strings across lines."""
    out = []
    i = 0
    n = len(line)
    while i < n:
        if state["block"]:
            j = line.find("*/", i)
            if j < 0:
                return "".join(out)
            state["block"] = False
            i = j + 2
            continue
        if state["str"] is not None:
            end = state["str"]
            if end == '"':
                if line[i] == "\\":
                    i += 2
                    continue
                if line[i] == '"':
                    state["str"] = None
                i += 1
                continue
            j = line.find(end, i)
            if j < 0:
                return "".join(out)
            state["str"] = None
            i = j + len(end)
            continue
        c = line[i]
        if line.startswith("//", i):
            break
        if line.startswith("/*", i):
            state["block"] = True
            i += 2
            continue
        m = re.match(r'b?r(#*)"', line[i:])
        if m and (i == 0 or not (line[i - 1].isalnum() or line[i - 1] == "_")):
            state["str"] = '"' + m.group(1)
            i += m.end()
            continue
        if c == '"':
            state["str"] = '"'
            i += 1
            continue
        if c == "'":
            m = re.match(r"'(\\.[^']*|[^\\'])'", line[i:])
            if m:
                i += m.end()
                continue
        out.append(c)
        i += 1
    return "".join(out)


def functions(path):
    with open(path, encoding="utf-8") as f:
        lines = f.readlines()
    state = {"block": False, "str": None}
    depth = 0
    open_fns = []  # (name, start line, depth before body)
    pending = None
    for number, raw in enumerate(lines, 1):
        code = strip(raw, state)
        m = FN.match(code)
        if m and pending is None:
            pending = (m.group(1), number, depth)
        for c in code:
            if c == "{":
                if pending is not None:
                    open_fns.append(pending)
                    pending = None
                depth += 1
            elif c == "}":
                depth -= 1
                if open_fns and open_fns[-1][2] == depth:
                    name, start, _ = open_fns.pop()
                    yield name, start, number - start + 1
            elif c == ";" and pending is not None and pending[2] == depth:
                pending = None  # a declaration without a body


def main():
    args = sys.argv[1:]
    limit = 80
    if args and args[0].isdigit():
        limit = int(args.pop(0))
    roots = args or ["crates"]
    rows = []
    for root in roots:
        files = [root] if root.endswith(".rs") else [
            os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".rs")
        ]
        for path in sorted(files):
            for name, start, length in functions(path):
                if length > limit:
                    rows.append((path, start, name, length))
    for path, start, name, length in sorted(rows):
        print(f"{length:5} {path}:{start} {name}")
    print(f"{len(rows)} functions over {limit} lines", file=sys.stderr)


if __name__ == "__main__":
    main()
