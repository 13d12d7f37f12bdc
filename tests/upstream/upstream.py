#!/usr/bin/env python3
"""Runs an upstream test suite on cuda-shim and holds its failures to a checked-in list.

  upstream.py run SUITE --shim CUDA_SHIM --python PY [--src DIR] --out RESULTS.json
  upstream.py check SUITE RESULTS.json
  upstream.py test SUITE ... (run, then check: what CTest runs)
--expected FILE (all three) replaces tests/upstream/expected.txt.

Suites: numba_cudadrv (numba-cuda's numba.cuda.tests.cudadrv, from the pinned wheel, through
numba_unittest.py) and cupy_cuda_tests (CuPy's tests/cupy_tests/cuda_tests; --src is the sdist
folder tools/python-env.sh unpacks). The list: every failing test must match an xfail entry,
and every entry must match (an xfail entry a failing test, a skip entry a test it kept from
running), so the list only shrinks.
docs/upstream-suites.md says more. Standard library only: runs on the venv's python.
"""
import argparse
import fnmatch
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
FAILING = ("fail", "error", "unexpected-success")
# SUITE  xfail|skip  PATTERN  # cause   (PATTERN may hold spaces: pytest parameter ids do)
ENTRY = re.compile(r"^(\S+)\s+(xfail|skip)\s+(.+?)\s+#\s*(\S.*)$")


def read_list(path, suite):
    """The entries of one suite: (kind, pattern, cause, line number)."""
    entries = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            m = ENTRY.match(line)
            if not m:
                sys.exit(f"{path}:{n}: not 'SUITE xfail|skip PATTERN  # cause': {line}")
            if m.group(1) == suite:
                entries.append((m.group(2), m.group(3), m.group(4), n))
    return entries


def matches(test_id, pattern):
    # Exact ids first: pytest parameter ids hold [ ], which fnmatch reads as a set.
    return test_id == pattern or fnmatch.fnmatchcase(test_id, pattern)


def run_numba(args, skips):
    out = os.path.abspath(args.out)
    cmd = [args.shim, "run", "--", args.python, os.path.join(HERE, "numba_unittest.py"),
           "numba.cuda.tests.cudadrv", "--out", out]
    for pattern in skips:
        cmd += ["--skip", pattern]
    rc = subprocess.call(cmd, cwd=os.path.dirname(out))
    if rc != 0 or not os.path.exists(out):
        sys.exit(f"numba_cudadrv: the runner did not finish (exit {rc}): see its output above")


def run_cupy(args, skips):
    out = os.path.abspath(args.out)
    xml, deselected = out + ".xml", out + ".deselected.json"
    for stale in (xml, deselected):
        if os.path.exists(stale):
            os.remove(stale)
    # junit_family xunit1 gives each case its file, from which the pytest node id is rebuilt. A
    # module that fails to import is a failing test (to list), as in unittest, not a broken run.
    cmd = [args.shim, "run", "--", args.python, "-m", "pytest", "-p", "no:cacheprovider",
           "-p", "upstream_deselect", "-q", "--tb=line", "-rN", "-m", "not slow and not multi_gpu",
           "--continue-on-collection-errors", "-o", "junit_family=xunit1", f"--junitxml={xml}",
           "tests/cupy_tests/cuda_tests"]
    env = dict(os.environ, CUPY_COMPILE_WITH_PTX="1", UPSTREAM_SKIP=json.dumps(skips),
               UPSTREAM_DESELECTED=deselected,
               PYTHONPATH=os.pathsep.join(filter(None, [HERE, os.environ.get("PYTHONPATH")])))
    rc = subprocess.call(cmd, cwd=args.src, env=env)
    if rc not in (0, 1) or not os.path.exists(xml) or not os.path.exists(deselected):
        # 1: some tests failed; anything else: pytest itself broke
        sys.exit(f"cupy_cuda_tests: pytest did not finish (exit {rc}): see its output above")
    tests = junit_outcomes(xml)
    with open(deselected) as f:
        tests.update((t, {"outcome": "deselected", "message": ""}) for t in json.load(f))
    with open(out, "w") as f:
        json.dump({"tests": tests}, f, indent=1, sort_keys=True)


def junit_outcomes(xml):
    """{node id: {"outcome", "message"}} from pytest's junit XML (xunit1)."""
    outcomes = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        path, classname, name = case.get("file", ""), case.get("classname", ""), case.get("name", "")
        module = path[:-3].replace("/", ".")
        cls = classname[len(module) + 1:] if path and classname.startswith(module) else classname
        # A module that failed to import is named after the module: its node id is its file.
        test_id = "::".join(p for p in (path, cls, "" if name == module else name) if p)
        outcome, message = "pass", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "fail" if child.tag == "failure" else "error"
                message = (child.get("message") or "") + "\n" + (child.text or "")
            elif child.tag == "skipped" and outcome == "pass":
                outcome = "xfail" if child.get("type") == "pytest.xfail" else "skip"
                message = child.get("message") or ""
        # A teardown error adds a second case of the same id: keep the failing one.
        if outcomes.get(test_id, {}).get("outcome") not in FAILING:
            outcomes[test_id] = {"outcome": outcome, "message": message}
    return outcomes


RUNNERS = {"numba_cudadrv": run_numba, "cupy_cuda_tests": run_cupy}


def run(args):
    skips = [p for kind, p, _, _ in read_list(args.expected, args.suite) if kind == "skip"]
    RUNNERS[args.suite](args, skips)


def check(suite, results_path, list_path):
    """Prints the verdict of one suite's results against the list; returns the exit status."""
    with open(results_path) as f:
        tests = json.load(f)["tests"]
    entries = read_list(list_path, suite)
    by_outcome = lambda *kinds: [t for t, r in tests.items() if r["outcome"] in kinds]
    failing, left_out = by_outcome(*FAILING), by_outcome("deselected")
    # An xfail entry must match a failing test, a skip entry a test it left out: else it is stale.
    matched = lambda kind, pattern: [t for t in (failing if kind == "xfail" else left_out) if matches(t, pattern)]
    new = [t for t in sorted(failing) if not any(matches(t, e[1]) for e in entries if e[0] == "xfail")]
    stale = [e for e in entries if not matched(e[0], e[1])]
    for test_id in new:
        # The error's last lines: a traceback ends with the exception.
        lines = tests[test_id]["message"].strip().splitlines() or ["(no message)"]
        print(f"new failure: {test_id} ({tests[test_id]['outcome']})\n    " + "\n    ".join(lines[-12:]))
    for kind, pattern, cause, n in stale:
        print(f"stale entry: remove it ({os.path.basename(list_path)}:{n}, {kind} matches no test): {pattern}")
    for kind, pattern, cause, n in entries:
        if kind == "skip":
            print(f"skipped by the list ({len(matched(kind, pattern))} tests): {pattern}  # {cause}")
    print(f"{suite}: {len(by_outcome('pass'))} passed, {len(failing) - len(new)} failed as expected, "
          f"{len(left_out)} skipped by the list, {len(by_outcome('skip', 'xfail'))} skipped by the suite, "
          f"{len(new)} new failures, {len(stale)} stale entries")
    return 1 if new or stale else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=("run", "check", "test"))
    ap.add_argument("suite", choices=sorted(RUNNERS))
    ap.add_argument("results", nargs="?", help="check: the RESULTS.json that run wrote")
    ap.add_argument("--shim", help="the cuda-shim launcher")
    ap.add_argument("--python", help="the Python with the suite's packages")
    ap.add_argument("--src", help="cupy_cuda_tests: the unpacked CuPy sdist")
    ap.add_argument("--out", help="run, test: where the results go")
    ap.add_argument("--expected", default=os.path.join(HERE, "expected.txt"))
    args = ap.parse_args()
    if args.command in ("run", "test"):
        if not (args.shim and args.python and args.out) or (args.suite == "cupy_cuda_tests" and not args.src):
            ap.error(f"{args.command} {args.suite} needs --shim, --python, --out (and --src for CuPy)")
        # The suites run from other folders: paths given relative to here must still hold.
        for name in ("shim", "python", "src", "out"):
            value = getattr(args, name)
            if value and os.sep in value:
                setattr(args, name, os.path.abspath(value))
        run(args)
    if args.command == "run":
        return 0
    if not (args.results or args.out):
        ap.error("check needs RESULTS.json")
    return check(args.suite, args.results or args.out, args.expected)


if __name__ == "__main__":
    sys.exit(main())
