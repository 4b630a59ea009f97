#!/usr/bin/env python3
"""Module import graph of each crate's `src/`: fails on an import cycle.

For every crate directory given (default: every workspace member with a
`src/lib.rs`), each source file is one module (`src/a.rs` or
`src/a/mod.rs` is `crate::a`, `src/a/b.rs` is `crate::a::b`; inline
`mod x { ... }` blocks count as part of their file). An edge A -> B is any
path in A's code that names B: `use crate::...`, `use super::...`,
`use self::...`, a `crate::`/`super::` path in an expression or type, or a
path through a child module declared in A (`child::item`). A path that ends
at an item re-exported with `pub use` is followed to the module that
defines the item, so that going through a face (`lib.rs`) is not mistaken
for depending on it. `mod` declarations themselves are not edges.

Reported: every strongly connected set of more than one module, with one
import line per edge of it. With `--no-import FROM:TO` (repeatable), any
edge from a module outside the prefix FROM... to a module under TO fails
too: for `sm4`, `--no-import 'crate::modes:crate::modes'` would mean "only
the modes layer and the crate root import `crate::modes`" (the crate root
is always allowed: it is the face).

Not counted: `#[cfg(test)]` modules (a unit test may reach any module; it
is not part of the library's graph) and `pub(in path)` visibilities.

What it cannot see (said here so that a clean run is read as what it is):
paths written inside `macro_rules!` bodies count against the file that
defines the macro, not the file that expands it; `#[path = ...]` modules;
modules behind `include!`; names brought in by a glob `use x::*` and then
used bare (the glob itself is one edge to `x`); items reached through a
type alias or a trait method rather than a path; and cfg is ignored (all
targets' modules count at once).
"""

import argparse
import os
import re
import sys

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def strip_comments_and_strings(text):
    """Blank out comments, string and char literals, keeping line breaks."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and (i == 0 or not re.match(r"\w", text[i - 1])):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            end = n if end < 0 else end + 1 + len(hashes)
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 12]):
            m = re.match(r"'(\\[^']*|[^\\'])'", text[i:])
            out.append("' '")
            i += len(m.group(0))
        else:
            out.append(c)
            i += 1
    return "".join(out)


def strip_test_modules(code):
    """Blank out `#[cfg(test)] mod x { ... }` blocks (test code is not part
    of the library's module graph), keeping line breaks."""
    out, pos = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s+)?mod\s+" + IDENT + r"\s*\{", code):
        if m.start() < pos:
            continue
        level, j = 1, m.end()
        while j < len(code) and level:
            level += code[j] == "{"
            level -= code[j] == "}"
            j += 1
        out.append(code[pos:m.start()])
        out.append("\n" * code.count("\n", m.start(), j))
        pos = j
    out.append(code[pos:])
    return "".join(out)


def strip_visibility_paths(code):
    """`pub(in crate::a)` names a module for visibility, not an import."""
    return re.sub(r"pub\(in [^)]*\)", "pub(crate)", code)


class Crate:
    def __init__(self, root):
        self.root = root
        self.src = os.path.join(root, "src")
        self.files = {}  # module path (tuple) -> file
        self.code = {}  # module path -> stripped text
        self._find(("crate",), os.path.join(self.src, "lib.rs"))

    def _find(self, module, path):
        self.files[module] = path
        with open(path, encoding="utf-8") as f:
            self.code[module] = strip_visibility_paths(strip_test_modules(strip_comments_and_strings(f.read())))
        # Where this file's child modules live.
        base = os.path.dirname(path)
        name = os.path.basename(path)
        if name not in ("lib.rs", "mod.rs"):
            base = os.path.join(base, name[:-3])
        for m in re.finditer(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(" + IDENT + r")\s*;", self.code[module], re.M):
            child = m.group(1)
            for candidate in (os.path.join(base, child + ".rs"), os.path.join(base, child, "mod.rs")):
                if os.path.exists(candidate):
                    self._find(module + (child,), candidate)
                    break

    def is_module(self, m):
        return m in self.files

    def children(self, module):
        return {m[-1] for m in self.files if len(m) == len(module) + 1 and m[:-1] == module}


def use_trees(code):
    """Yield (line, is_pub, path list) for each `use` item, trees expanded."""
    for m in re.finditer(r"(^|[;{}\s])(pub(?:\([^)]*\))?\s+)?use\s+([^;]*);", code, re.M):
        line = code.count("\n", 0, m.start(3)) + 1
        for path in expand(m.group(3).replace("\n", " ").strip()):
            yield line, m.start(3), bool(m.group(2)), path


def expand(tree):
    """`a::{b, c::{d, e as f}}` -> [[a, b], [a, c, d], [a, c, e]]."""
    tree = tree.strip()
    if not tree:
        return []
    brace = tree.find("{")
    if brace < 0:
        tree = re.sub(r"\s+as\s+" + IDENT + r"$", "", tree).strip()
        return [[p.strip() for p in tree.split("::") if p.strip()]]
    prefix = [p.strip() for p in tree[:brace].split("::") if p.strip()]
    inner = tree[brace + 1:tree.rfind("}")]
    parts, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    parts.append(cur)
    out = []
    for p in parts:
        for sub in expand(p):
            out.append(prefix + sub if sub != ["self"] else prefix)
    return out


def inline_depth(code, offset):
    """How many inline `mod x { ... }` blocks enclose `offset`."""
    depth = 0
    for m in re.finditer(r"\bmod\s+" + IDENT + r"\s*\{", code[:offset]):
        level, j = 1, m.end()
        while j < offset and level:
            level += code[j] == "{"
            level -= code[j] == "}"
            j += 1
        depth += level > 0
    return depth


def absolute(crate, module, path, depth=0):
    """A `use`/expression path made absolute (a tuple from `crate`), or None
    when it names something outside the crate or inside the same file
    (`depth`: the inline modules around the path, which `super` leaves
    first)."""
    if not path:
        return None
    head = path[0]
    if head == "crate":
        return tuple(path)
    if head in ("super", "self"):
        cur = list(module)
        rest = list(path)
        while rest and rest[0] in ("super", "self"):
            if rest.pop(0) == "super":
                if depth:
                    depth -= 1
                else:
                    cur = cur[:-1] if len(cur) > 1 else cur
        if depth:
            return None
        return tuple(cur + rest)
    if head in crate.children(module):
        return module + tuple(path)
    return None


def exports(crate):
    """(module, name) -> absolute path that a `pub use` in module names."""
    table, globs = {}, {}
    for module, code in crate.code.items():
        for _, offset, is_pub, path in use_trees(code):
            if not is_pub:
                continue
            target = absolute(crate, module, path, inline_depth(code, offset))
            if target is None:
                continue
            if target[-1] == "*":
                globs.setdefault(module, []).append(target[:-1])
            else:
                table[(module, target[-1])] = target
    return table, globs


def resolve(crate, target, table, globs, depth=0):
    """The module that defines what the absolute path `target` names."""
    # The longest prefix that is a module.
    for cut in range(len(target), 0, -1):
        if crate.is_module(target[:cut]):
            module, rest = target[:cut], target[cut:]
            break
    else:
        return None
    if not rest or rest == ("*",) or depth > 8:
        return module
    hop = table.get((module, rest[0]))
    if hop is not None and hop != target:
        return resolve(crate, hop + rest[1:], table, globs, depth + 1)
    for g in globs.get(module, []):
        inner = resolve(crate, g + rest, table, globs, depth + 1)
        if inner is not None and inner != module:
            return inner
    return module


def edges(crate):
    table, globs = exports(crate)
    found = {}
    for module, code in crate.code.items():
        lines = code.split("\n")
        refs = []
        for line, offset, _, path in use_trees(code):
            refs.append((line, offset, path))
        start = 0
        for n, text in enumerate(lines, 1):
            if not re.match(r"\s*(pub(\([^)]*\))?\s+)?use\s", text):
                for m in re.finditer(r"(?<![\w:$])((?:crate|super|self)(?:::" + IDENT + r")+)", text):
                    refs.append((n, start + m.start(), m.group(1).split("::")))
                for child in crate.children(module):
                    for m in re.finditer(r"(?<![\w:$])(" + child + r"(?:::" + IDENT + r")+)", text):
                        refs.append((n, start + m.start(), m.group(1).split("::")))
            start += len(text) + 1
        for line, offset, path in refs:
            target = absolute(crate, module, path, inline_depth(code, offset))
            if target is None:
                continue
            to = resolve(crate, target, table, globs)
            if to is None or to == module:
                continue
            found.setdefault((module, to), (line, "::".join(path)))
    return found


def cycles(nodes, graph):
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def name(m):
    return "::".join(m)


def check(root, rules):
    crate = Crate(root)
    found = edges(crate)
    graph = {}
    for a, b in found:
        graph.setdefault(a, set()).add(b)
    bad = 0
    for comp in cycles(crate.files, graph):
        bad += 1
        members = set(comp)
        print(f"{root}: import cycle through {len(comp)} modules: {', '.join(name(m) for m in comp)}")
        for (a, b), (line, path) in sorted(found.items()):
            if a in members and b in members:
                rel = os.path.relpath(crate.files[a])
                print(f"    {rel}:{line}: {name(a)} -> {name(b)} ({path})")
    for src_prefix, dst_prefix in rules:
        src = tuple(src_prefix.split("::"))
        dst = tuple(dst_prefix.split("::"))
        for (a, b), (line, path) in sorted(found.items()):
            if b[:len(dst)] == dst and a[:len(src)] != src and a != ("crate",):
                bad += 1
                rel = os.path.relpath(crate.files[a])
                print(f"{rel}:{line}: {name(a)} imports {name(b)} from below it ({path})")
    print(f"{root}: {len(crate.files)} modules, {len(found)} import edges, "
          f"{'clean' if not bad else f'{bad} problem(s)'}")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("crates", nargs="*", help="crate directories (default: every member with src/lib.rs)")
    ap.add_argument("--no-import", action="append", default=[], metavar="FROM:TO",
                    help="CRATE_DIR=FROM:TO: in that crate, only modules under FROM may import modules under TO")
    args = ap.parse_args()
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    crates = args.crates or sorted(
        d for d in os.listdir(".") if os.path.exists(os.path.join(d, "src", "lib.rs")) and os.path.exists(os.path.join(d, "Cargo.toml"))
    )
    rules = {}
    for r in args.no_import:
        crate_dir, rule = r.split("=", 1)
        frm, to = rule.split(":crate", 1)
        rules.setdefault(crate_dir, []).append((frm, "crate" + to))
    bad = sum(check(c, rules.get(c, [])) for c in crates)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
