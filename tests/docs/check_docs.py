#!/usr/bin/env python3
"""Checks that the documentation keeps up with the code.

1. Every CUDA_SHIM_* environment variable the code reads (the emulator, tools, Python package,
   benchmarks, tests, CI) has a row in docs/configuration.md's tables.
2. Every relative link in README.md and docs/*.md names a file that exists.
3. README.md and docs/benchmarks.md type no speed figure by hand: timings and speed-ups come
   from bench/report.py, which writes docs/performance.md and copies its key table into
   README.md between two markers; every row there must be a row of docs/performance.md.

Usage: check_docs.py [REPO_ROOT]; exits 1 listing every problem.
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
SCANNED = ("emu", "tools", "python", "bench", "tests", ".ci", "include")
SKIP_DIRS = {"__pycache__", "corpus", "corpus_image", "data"}

# How each kind of source reads a variable.
LITERAL = re.compile(r"""["'](CUDA_SHIM_[A-Z0-9_]+)["']""")   # C/C++/Python: getenv("X"), environ["X"]
SHELL = re.compile(r"\$\{?(CUDA_SHIM_[A-Z0-9_]+)")             # sh: $X, ${X:-...}
CMAKE = re.compile(r"\$ENV\{(CUDA_SHIM_[A-Z0-9_]+)\}")         # CMake: $ENV{X}


def variables_read():
    found = {}
    for top in SCANNED:
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, top)):
            dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
            for name in filenames:
                path = os.path.join(dirpath, name)
                if name.endswith((".cpp", ".hpp", ".h", ".c", ".py", ".cu")):
                    pats = (LITERAL,)
                elif name.endswith((".sh", ".in")) or name == "run":
                    pats = (SHELL,)
                elif name == "CMakeLists.txt" or name.endswith(".cmake"):
                    pats = (CMAKE,)
                else:
                    continue
                try:
                    text = open(path, encoding="utf-8", errors="replace").read()
                except OSError:
                    continue
                for pat in pats:
                    for m in pat.finditer(text):
                        found.setdefault(m.group(1), os.path.relpath(path, ROOT))
    return found


def documented():
    text = open(os.path.join(ROOT, "docs", "configuration.md"), encoding="utf-8").read()
    names = set()
    for line in text.splitlines():
        if line.startswith("|"):
            first = line.split("|")[1]
            names.update(re.findall(r"`(CUDA_SHIM_[A-Z0-9_]+)`", first))
    return names


def broken_links():
    problems = []
    files = [os.path.join(ROOT, "README.md")]
    files += [os.path.join(ROOT, "docs", f) for f in sorted(os.listdir(os.path.join(ROOT, "docs"))) if f.endswith(".md")]
    for f in files:
        for target in re.findall(r"\]\(([^)\s]+)\)", open(f, encoding="utf-8").read()):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = os.path.normpath(os.path.join(os.path.dirname(f), target.split("#")[0]))
            if not os.path.exists(path):
                problems.append(f"{os.path.relpath(f, ROOT)}: link to {target}, which does not exist")
    return problems


FIGURE = re.compile(r"\b\d+(?:[.,]\d+)?\s*(?:ns|us|µs|ms|GB/s|GiB/s|MB/s)\b|\b\d+(?:\.\d+)?\s*x (?:faster|slower)\b")


BEGIN, END = "<!-- performance:begin", "<!-- performance:end -->"


def typed_figures():
    problems = []
    perf = os.path.join(ROOT, "docs", "performance.md")
    generated = set(open(perf, encoding="utf-8").read().splitlines()) if os.path.exists(perf) else set()
    for rel in ("README.md", os.path.join("docs", "benchmarks.md")):
        inside = False
        for n, line in enumerate(open(os.path.join(ROOT, rel), encoding="utf-8"), 1):
            if line.startswith(BEGIN):
                inside = True
                continue
            if line.startswith(END):
                inside = False
                continue
            if inside:
                # The copied block: its table rows must be docs/performance.md's, byte for byte.
                if line.startswith("|") and line.rstrip("\n") not in generated:
                    problems.append(f"{rel}:{n}: a performance row that docs/performance.md does not hold "
                                    "(rerun bench/report.py render)")
                continue
            for m in FIGURE.finditer(line):
                problems.append(f"{rel}:{n}: typed figure '{m.group(0)}' (put it in bench/report.py's output instead)")
    return problems


def main():
    problems = []
    docs = documented()
    for var, where in sorted(variables_read().items()):
        if var not in docs:
            problems.append(f"{var} (read in {where}) has no row in docs/configuration.md")
    problems += broken_links()
    problems += typed_figures()
    for p in problems:
        print("FAIL:", p)
    if problems:
        sys.exit(1)
    print(f"docs ok: {len(docs)} variables documented, links and figures checked")


if __name__ == "__main__":
    main()
