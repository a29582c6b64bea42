#!/usr/bin/env python3
"""Find import circles between the files of each crate under crates/.

Usage: .ci/import_circles.py [CRATE_DIR...]   (default: every crates/*)

Each `src/**/*.rs` file is one module. A file depends on another when it
names an item of it through `crate::`, `super::` or `self::` (in a `use` or
inline in code). A path that ends at a module which only re-exports the
item (`pub use self::x::Item`) is followed to the file that defines it, so
`use super::Exporter` in `export/csv.rs` depends on `export/exporter.rs`,
not on `export/mod.rs`. `pub use` and `mod` lines are selection, not
dependence, and make no edge. Prints every group of files that depend on
each other in a circle (a strongly connected component of two or more
files) with the edges inside it.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from function_lengths import strip  # noqa: E402

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def module_files(src):
    mods = {}
    for d, _, fs in os.walk(src):
        for f in fs:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(d, f), src)[:-3].split(os.sep)
            if rel[-1] in ("lib", "main", "mod"):
                rel = rel[:-1]
            if rel and rel[0] == "bin":
                continue
            mods[tuple(rel)] = os.path.join(d, f)
    return mods


def expand(tree):
    """`a::{b, c::{d, e}}` -> [a::b, a::c::d, a::c::e]"""
    tree = re.sub(r"\s+", "", tree)
    i = tree.find("{")
    if i < 0:
        return [re.sub(r"as" + IDENT + "$", "", tree) if "::" in tree else tree]
    head = tree[:i]
    depth = 0
    parts, cur = [], ""
    for c in tree[i + 1 : tree.rfind("}")]:
        if c == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += c == "{"
        depth -= c == "}"
        cur += c
    parts.append(cur)
    out = []
    for p in parts:
        if p:
            out.extend(head + q for q in expand(p))
    return out


def scan(path):
    """Yields (inline module path, use tree or inline path, is_pub_use)."""
    state = {"block": False, "str": None}
    with open(path, encoding="utf-8") as f:
        code = [strip(line, state) for line in f]
    text = "\n".join(code)
    inline = []  # (name, depth at which its body opened)
    depth = 0
    i = 0
    mod_re = re.compile(r"\bmod\s+(" + IDENT + r")\s*\{")
    use_re = re.compile(r"\b(pub(?:\([^)]*\))?\s+)?use\s+([^;]*);")
    path_re = re.compile(r"(?<![A-Za-z0-9_:])((?:crate|super|self)(?:::" + IDENT + ")+)")
    while i < len(text):
        m = mod_re.match(text, i)
        if m and (i == 0 or not text[i - 1].isalnum()):
            inline.append((m.group(1), depth))
            depth += 1
            i = m.end()
            continue
        m = use_re.match(text, i)
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            for p in expand(m.group(2)):
                yield [n for n, _ in inline], p, bool(m.group(1))
            i = m.end()
            continue
        m = path_re.match(text, i)
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "_:")):
            yield [n for n, _ in inline], m.group(1), False
            i = m.end()
            continue
        c = text[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if inline and inline[-1][1] == depth:
                inline.pop()
        i += 1


def absolute(mod, inline, p):
    segs = p.split("::")
    base = list(mod) + inline
    if segs[0] == "crate":
        return segs[1:]
    if segs[0] not in ("self", "super"):
        return None  # an extern crate or a name in scope
    while segs and segs[0] in ("self", "super"):
        if segs.pop(0) == "super":
            base = base[:-1]
    return base + segs


def main():
    crates = sys.argv[1:] or sorted(
        os.path.join("crates", c) for c in os.listdir("crates") if os.path.isdir(os.path.join("crates", c, "src"))
    )
    found = 0
    for crate in crates:
        src = os.path.join(crate, "src")
        mods = module_files(src)
        reexports = {}  # module -> {name: absolute path}
        uses = {}
        for mod, path in mods.items():
            reexports[mod] = {}
            uses[mod] = []
            for inline, p, is_pub in scan(path):
                target = absolute(mod, inline, p)
                if target is None:
                    continue
                if is_pub and not inline:
                    name = target[-1]
                    reexports[mod][name] = target
                    if name == "*":
                        reexports[mod].setdefault("*globs", []).append(target[:-1])
                else:
                    uses[mod].append(target)

        def resolve(target, seen=0):
            for k in range(len(target), -1, -1):
                prefix = tuple(target[:k])
                if prefix in mods:
                    rest = target[k:]
                    if rest and seen < 8:
                        via = reexports[prefix].get(rest[0])
                        if via is not None and via[:-1] != list(prefix):
                            return resolve(via + rest[1:], seen + 1)
                    return prefix
            return None

        edges = {m: set() for m in mods}
        for mod, targets in uses.items():
            for t in targets:
                r = resolve(t)
                if r is not None and r != mod and not (len(r) < len(mod) and mod[: len(r)] == r and not t[len(r):]):
                    edges[mod].add(r)
        for comp in sccs(edges):
            if len(comp) < 2:
                continue
            found += 1
            names = sorted(mods[m] for m in comp)
            print("circle: " + " <-> ".join(names))
            for a in sorted(comp):
                for b in sorted(edges[a] & comp):
                    print(f"    {mods[a]} -> {mods[b]}")
    print(f"{found} import circles", file=sys.stderr)


def sccs(edges):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            out.append(comp)

    sys.setrecursionlimit(10000)
    for v in list(edges):
        if v not in index:
            visit(v)
    return out


if __name__ == "__main__":
    main()
