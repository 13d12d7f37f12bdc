#!/usr/bin/env python3
"""Keeps the example programs in docs/ true: their source and their output are checked.

A page embeds an example as a marker, then the program's source, then (after any prose) what
it prints:

    <!-- example: tests/examples/pools_reuse.cpp env: CUDA_SHIM_DEVICES=2 -->
    ```cpp
    ...the file, exactly...
    ```
    ```text
    ...its stdout and stderr (one pipe), exactly...
    ```

`env:` (optional) lists the settings the example runs under; every other CUDA_SHIM_* variable
of the caller's environment is removed, and the run gets a registry segment of its own, so the
output does not depend on who runs it. The example's executable is example_<stem>.
Addresses (0x and 9 or more hex digits), which the emulator's explanations name, print as 0x….

  check_examples.py [--root R] --static                  every tests/examples/*.cpp is embedded
                                                          exactly once and every cpp block equals
                                                          its file (no build needed)
  check_examples.py [--root R] --exe BIN FILE             runs BIN, compares FILE's two blocks
  check_examples.py [--root R] --bin-dir DIR [--update] [FILE...]
                                                          every example (or the FILEs), run from
                                                          DIR; --update rewrites both blocks from
                                                          the files and fresh runs

Exits 1 on a mismatch, printing a unified diff (expected = the page, actual = file or run).
"""
import argparse
import difflib
import glob
import os
import re
import subprocess
import sys

MARKER = re.compile(r"^<!-- example: (\S+)(?: env: (.*?))? -->$")
FENCE = re.compile(r"^```(\w*)$")
ADDRESS = re.compile(r"\b0x[0-9a-f]{9,}\b")


class Embed:
    """One marker in one page: where its blocks are (line numbers of their bodies)."""

    def __init__(self, page, line, path, env):
        self.page, self.line, self.path, self.env = page, line, path, env
        self.cpp = None  # (first body line, end line = the closing fence), 0-based
        self.text = None


def parse_env(spec):
    env = {}
    for item in (spec or "").split():
        name, sep, value = item.partition("=")
        if not sep or not name.startswith("CUDA_SHIM_"):
            raise ValueError(f"env item {item!r} is not CUDA_SHIM_NAME=value")
        env[name] = value
    return env


def blocks_after(lines, start):
    """The fenced blocks after line `start`, up to the next marker: [(lang, body, end)]."""
    out, i = [], start + 1
    while i < len(lines) and not MARKER.match(lines[i]):
        m = FENCE.match(lines[i])
        if m:
            j = i + 1
            while j < len(lines) and lines[j] != "```":
                j += 1
            out.append((m.group(1), i + 1, j))
            i = j
        i += 1
    return out


def find_embeds(root):
    embeds, problems = [], []
    for page in sorted(glob.glob(os.path.join(root, "docs", "*.md"))):
        lines = open(page, encoding="utf-8").read().split("\n")
        for n, line in enumerate(lines):
            m = MARKER.match(line)
            if not m:
                continue
            rel = os.path.relpath(page, root)
            try:
                e = Embed(rel, n, m.group(1), parse_env(m.group(2)))
            except ValueError as err:
                problems.append(f"{rel}:{n + 1}: {err}")
                continue
            blocks = blocks_after(lines, n)
            if blocks and blocks[0][0] == "cpp":
                e.cpp = blocks[0][1:]
                if len(blocks) > 1 and blocks[1][0] == "text":
                    e.text = blocks[1][1:]
            embeds.append(e)
    return embeds, problems


def body(root, e, which):
    lines = open(os.path.join(root, e.page), encoding="utf-8").read().split("\n")
    span = getattr(e, which)
    return None if span is None else "\n".join(lines[span[0]:span[1]]) + "\n"


def diff(expected, actual, what):
    return "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                        f"{what} (in the page)", f"{what} (actual)"))


def run_example(exe, env_over):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUDA_SHIM_")}
    env["CUDA_SHIM_REGISTRY"] = f"cuda-shim-example-{os.path.basename(exe)}-{os.getpid()}"
    env.update(env_over)
    p = subprocess.run([exe], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, timeout=120)
    # Explanations name the objects they checked by address; addresses change from run to run.
    out = ADDRESS.sub("0x…", p.stdout.decode("utf-8", "replace"))
    if p.returncode != 0:
        out += f"[exit status {p.returncode}]\n"
    return out


def check_static(root, embeds):
    problems = []
    files = sorted(os.path.relpath(f, root) for f in glob.glob(os.path.join(root, "tests", "examples", "*.cpp")))
    for f in files:
        n = sum(1 for e in embeds if e.path == f)
        if n != 1:
            problems.append(f"{f}: embedded in docs/ {n} times (want once, under an '<!-- example: {f} -->' marker)")
    for e in embeds:
        where = f"{e.page}:{e.line + 1}"
        if not os.path.exists(os.path.join(root, e.path)):
            problems.append(f"{where}: {e.path} does not exist")
            continue
        if e.cpp is None or e.text is None:
            problems.append(f"{where}: a ```cpp block, then a ```text block, must follow the marker")
            continue
        src = open(os.path.join(root, e.path), encoding="utf-8").read()
        d = diff(body(root, e, "cpp"), src, e.path)
        if d:
            problems.append(f"{where}: the source shown differs from {e.path}:\n{d}")
    return problems


def check_run(root, e, exe):
    actual = run_example(exe, e.env)
    d = diff(body(root, e, "text"), actual, f"output of {e.path}")
    return [f"{e.page}:{e.line + 1}: the output shown differs from a run:\n{d}"] if d else []


def update(root, e, exe):
    """Rewrites e's blocks (inserting them when missing) from its file and a run."""
    page = os.path.join(root, e.page)
    lines = open(page, encoding="utf-8").read().split("\n")
    src = open(os.path.join(root, e.path), encoding="utf-8").read().rstrip("\n").split("\n")
    out = run_example(exe, e.env).rstrip("\n").split("\n")
    if e.cpp is None:
        lines[e.line + 1:e.line + 1] = ["```cpp", "```", "", "```text", "```"]
        e.cpp, e.text = (e.line + 2, e.line + 2), (e.line + 5, e.line + 5)
    elif e.text is None:
        lines[e.cpp[1] + 1:e.cpp[1] + 1] = ["", "```text", "```"]
        e.text = (e.cpp[1] + 3, e.cpp[1] + 3)
    # The later block first, so the earlier one's line numbers still hold.
    lines[e.text[0]:e.text[1]] = out
    lines[e.cpp[0]:e.cpp[1]] = src
    open(page, "w", encoding="utf-8").write("\n".join(lines))


def example_path(root, f):
    """FILE as the markers write it: a path from the root, from here, or an example's name."""
    for c in (f, os.path.join("tests", "examples", f), os.path.join("tests", "examples", f + ".cpp")):
        if os.path.isfile(os.path.join(root, c)):
            return os.path.normpath(c)
    return os.path.relpath(os.path.abspath(f), root) if os.path.isfile(f) else f


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    ap.add_argument("--static", action="store_true")
    ap.add_argument("--exe")
    ap.add_argument("--bin-dir")
    ap.add_argument("--update", action="store_true")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    embeds, problems = find_embeds(root)
    if a.static:
        problems += check_static(root, embeds)
    else:
        wanted = [example_path(root, f) for f in a.files]
        chosen = [e for e in embeds if not wanted or e.path in wanted]
        missing = set(wanted) - {e.path for e in chosen}
        problems += [f"{f}: no '<!-- example: {f} -->' marker in docs/" for f in sorted(missing)]
        if a.exe and len(chosen) != 1:
            problems.append("--exe takes exactly one example file")
            chosen = []
        elif not a.exe and not a.bin_dir:
            ap.error("give --static, --exe BIN FILE or --bin-dir DIR")
        # Updates go bottom-up within a page, so that earlier markers' line numbers hold.
        for e in sorted(chosen, key=lambda e: (e.page, -e.line)):
            exe = a.exe or os.path.join(a.bin_dir, "example_" + os.path.splitext(os.path.basename(e.path))[0])
            if not os.path.exists(exe):
                problems.append(f"{e.path}: no executable {exe} (build its target)")
            elif a.update:
                update(root, e, exe)
                print(f"updated {e.page}:{e.line + 1} ({e.path})")
            elif e.cpp is None or e.text is None:
                problems.append(f"{e.page}:{e.line + 1}: a ```cpp block, then a ```text block, must follow the marker")
            else:
                problems += check_run(root, e, exe)
                d = diff(body(root, e, "cpp"), open(os.path.join(root, e.path), encoding="utf-8").read(), e.path)
                if d:
                    problems.append(f"{e.page}:{e.line + 1}: the source shown differs from {e.path}:\n{d}")
    for p in problems:
        print(p)
    if not problems and not a.update:
        print("examples ok" if not a.static else f"examples ok: {len(embeds)} embedded, sources exact")
    if problems:
        print("(check_examples.py --bin-dir BUILD/bin --update rewrites the pages' blocks; docs/testing.md)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
