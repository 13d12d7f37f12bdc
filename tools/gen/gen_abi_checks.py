#!/usr/bin/env python3
"""Writes tests/abi/abi_checks.inc: one static_assert per fact that NVIDIA's CUDA headers declare
(every tag type, enumerator value, struct/union layout, typedef and function signature), for
test_header_abi.cpp to compare against ours. It reads NVIDIA's headers through clang's JSON AST
(names and kinds only; no header text is copied).
  tools/gen/gen_abi_checks.py [--cuda-root /usr/local/cuda] [--clang clang++] [--check] [OUT]
OUT defaults to stdout; --check compares with OUT instead of writing it (CTest abi.checks_current). Regenerate after moving to a new toolkit, then fix what no longer
compiles in include/cuda_shim/.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HEADERS = ("cuda.h", "cudaTypedefs.h", "cuda_runtime_api.h", "library_types.h")


def ast(clang, root):
    with tempfile.NamedTemporaryFile("w", suffix=".cpp", delete=False) as f:
        f.write("".join(f"#include <{h}>\n" for h in HEADERS))
        src = f.name
    try:
        out = subprocess.run([clang, "-std=c++17", "-I", os.path.join(root, "include"), "-Xclang",
                              "-ast-dump=json", "-fsyntax-only", src], check=True, capture_output=True).stdout
    finally:
        os.unlink(src)
    return json.loads(out)


class Walker:
    """Visits declarations in source order, knowing each one's file (the JSON dump names a
    file only where it changes from the previous location printed, so every location counts)."""

    def __init__(self, inc):
        self.inc = os.path.realpath(inc) + os.sep
        self.file = None
        self.tags, self.enums, self.layouts, self.typedefs, self.funcs = [], [], [], [], []
        self.seen = set()
        self.opaque = []

    def _loc(self, loc):
        if not loc:
            return
        for k in ("spellingLoc", "expansionLoc"):
            if k in loc:
                self._loc(loc[k])
        if "file" in loc:
            self.file = loc["file"]

    def _advance(self, node):
        self._loc(node.get("loc"))
        decl_file = self.file
        r = node.get("range") or {}
        self._loc(r.get("begin"))
        self._loc(r.get("end"))
        return decl_file

    def ours(self, f):
        return f is not None and os.path.realpath(f).startswith(self.inc)

    def walk(self, nodes, scope=""):
        prev = None
        for i, n in enumerate(nodes):
            f = self._advance(n)
            kind = n.get("kind")
            nvidia = self.ours(f) and not n.get("isImplicit")
            name = n.get("name")
            anon_enum_before, prev = prev, n
            if kind == "LinkageSpecDecl":
                self.walk(n.get("inner", []), scope)
                continue
            if kind == "CXXRecordDecl" and nvidia and name and n.get("tagUsed") in ("struct", "union"):
                q = scope + name
                if n.get("completeDefinition"):
                    if q not in self.seen:
                        self.seen.add(q)
                        self.tags.append(q)
                    self.layouts.append((q, n))
                elif not self._in_typedef(n, nodes[i + 1] if i + 1 < len(nodes) else None) and q not in self.opaque:
                    # `struct X;` on its own declares X in our namespace too; `typedef struct X *Y;`
                    # names NVIDIA's X wherever it is already declared, so only the first needs a map.
                    self.opaque.append(q)
                self.walk(n.get("inner", []), q + "::")
                continue
            if kind == "EnumDecl" and nvidia:
                if name and scope + name not in self.seen:
                    self.seen.add(scope + name)
                    self.tags.append(scope + name)
                for c in n.get("inner", []):
                    self._advance(c)
                    if c.get("kind") == "EnumConstantDecl":
                        self.enums.append(c["name"])
                    self.walk(c.get("inner", []), scope)
                continue
            if kind == "TypedefDecl" and nvidia and not scope:
                self.typedefs.append(name)
                # typedef enum { ... } X: X names the enumeration, which has no tag of its own.
                a = anon_enum_before
                if a is not None and a.get("kind") == "EnumDecl" and not a.get("name") and name not in self.seen:
                    self.seen.add(name)
                    self.tags.append(name)
            elif kind == "FunctionDecl" and nvidia and not scope and name not in self.funcs:
                self.funcs.append(name)
            self.walk(n.get("inner", []), scope)

    @staticmethod
    def _in_typedef(rec, nxt):
        """Is rec the `struct X` of a `typedef struct X ...` (the typedef owns it)?"""
        def owns(n):
            if (n.get("ownedTagDecl") or {}).get("id") == rec.get("id"):
                return True
            return any(owns(c) for c in n.get("inner", []))
        return nxt is not None and nxt.get("kind") == "TypedefDecl" and owns(nxt)


def fields_of(rec, walker):
    # Members of anonymous unions/structs count as the record's own (IndirectFieldDecl).
    return [c["name"] for c in rec.get("inner", [])
            if c.get("kind") in ("FieldDecl", "IndirectFieldDecl") and c.get("name")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cuda-root", default=os.environ.get("NVIDIA_CUDA_ROOT", "/usr/local/cuda"))
    ap.add_argument("--clang", default="clang++")
    ap.add_argument("--check", action="store_true", help="compare with OUT instead of writing it")
    ap.add_argument("out", nargs="?")
    a = ap.parse_args()
    w = Walker(os.path.join(a.cuda_root, "include"))
    w.walk(ast(a.clang, a.cuda_root).get("inner", []))
    L = ["// Generated by tools/gen/gen_abi_checks.py from NVIDIA CUDA 13.0 headers: one check per fact."]
    L.append("// ---- type map: our types -> NVIDIA's ----")
    tags = w.tags + [t for t in w.opaque if t not in w.seen]
    L += [f"template <> struct nv<shim::{t}> {{ using type = ::{t}; }};" for t in tags]
    L.append("// ---- enumerator values ----")
    L += [f'static_assert((long long)shim::{e} == (long long)::{e}, "{e}");' for e in w.enums]
    L.append("// ---- struct/union layouts ----")
    for q, rec in w.layouts:
        L.append(f"static_assert(sizeof(shim::{q}) == sizeof(::{q}) && alignof(shim::{q}) == alignof(::{q}), \"layout of {q}\");")
        for fld in fields_of(rec, w):
            L.append(f"static_assert(offsetof(shim::{q}, {fld}) == offsetof(::{q}, {fld}) && sizeof(shim::{q}::{fld}) == "
                     f"sizeof(::{q}::{fld}), \"{q}.{fld}\");")
    L.append("// ---- typedefs ----")
    L += [f'static_assert(std::is_same_v<nv_t<shim::{t}>, ::{t}>, "typedef {t}");' for t in w.typedefs]
    L.append("// ---- functions ----")
    L += [f'static_assert(std::is_same_v<nv_t<decltype(shim::{f})>, decltype(::{f})>, "signature of {f}");' for f in w.funcs]
    text = "\n".join(L) + "\n"
    if a.check:
        have = open(a.out).read() if a.out and os.path.exists(a.out) else ""
        if have != text:
            import difflib
            sys.stdout.writelines(list(difflib.unified_diff(have.splitlines(True), text.splitlines(True),
                                                             a.out or "OUT", "generated"))[:200])
            print(f"{a.out} is not what {sys.argv[0]} writes from {a.cuda_root}: regenerate it")
            sys.exit(1)
        return
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
