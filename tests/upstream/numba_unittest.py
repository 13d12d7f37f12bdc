"""Runs a numba-cuda test package with unittest and writes each test's outcome as JSON.

Usage (inside `cuda-shim run --`): python numba_unittest.py MODULE --out RESULTS.json [--skip PATTERN ...]

pytest cannot run the suites shipped in the numba-cuda wheel: the fixture their tests need
(initialize_from_pytest_config) lives in numba-cuda's repository conftest, not in the wheel.
unittest's loader goes through the package's load_tests, as `python -m numba.runtests` does.
RESULTS.json: {"tests": {test id: {"outcome": ..., "message": ...}}}, outcomes pass, fail,
error, skip, xfail, unexpected-success, and deselected (matched a --skip pattern: not run).
"""
import argparse
import fnmatch
import json
import sys
import unittest


def flatten(suite):
    for test in suite:
        if isinstance(test, unittest.TestSuite):
            yield from flatten(test)
        else:
            yield test


def matches(test_id, patterns):
    # Exact ids first: they may hold characters fnmatch reads as a glob ([, ]).
    return any(test_id == p or fnmatch.fnmatchcase(test_id, p) for p in patterns)


class Recorder(unittest.TextTestResult):
    """Records every test's outcome beside the usual verbose output."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.outcomes = {}

    def record(self, test, outcome, message=""):
        # A failed subtest or tearDown stays the test's outcome, whatever follows.
        if self.outcomes.get(test.id(), {}).get("outcome") in ("fail", "error"):
            return
        self.outcomes[test.id()] = {"outcome": outcome, "message": message}

    def addSuccess(self, test):
        super().addSuccess(test)
        self.record(test, "pass")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.record(test, "fail", self._exc_info_to_string(err, test))

    def addError(self, test, err):
        super().addError(test, err)
        self.record(test, "error", self._exc_info_to_string(err, test))

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            kind = "fail" if issubclass(err[0], test.failureException) else "error"
            self.record(test, kind, f"{subtest.id()}\n" + self._exc_info_to_string(err, test))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self.record(test, "skip", reason)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self.record(test, "xfail")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self.record(test, "unexpected-success", "marked expectedFailure, but passed")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("module")
    ap.add_argument("--out", required=True)
    ap.add_argument("--skip", action="append", default=[])
    args = ap.parse_args()

    tests = list(flatten(unittest.defaultTestLoader.loadTestsFromName(args.module)))
    # One flat suite keeps the order, so class and module fixtures still run once each.
    suite = unittest.TestSuite(t for t in tests if not matches(t.id(), args.skip))
    runner = unittest.TextTestRunner(stream=sys.stderr, verbosity=2, resultclass=Recorder)
    result = runner.run(suite)

    outcomes = {t.id(): {"outcome": "deselected", "message": ""} for t in tests if matches(t.id(), args.skip)}
    outcomes.update(result.outcomes)
    with open(args.out, "w") as f:
        json.dump({"tests": outcomes}, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
