#!/usr/bin/env python3
"""Checks bench/report.py's judgements that no benchmark run exercises on its own: which round a
benchmark keeps (collect --rounds), when a key row is also judged against each side's own host
baseline (HOST_DRIFT), and how the kernel rows are judged (per core, scaling, launch overhead)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import report  # noqa: E402


def run(times, extra=None):
    """One binary's JSON: a median row (and a mean row) per benchmark, as --benchmark_report_aggregates_only writes."""
    rows = []
    for name, t in times.items():
        for agg, v in (("mean", t + 1000), ("median", t)):
            rows.append({"name": f"{name}/real_time_{agg}", "run_type": "aggregate", "aggregate_name": agg,
                         "real_time": v, "time_unit": "ns", "items_per_second": 1e9 / v, **(extra or {})})
    return {"context": {}, "benchmarks": rows}


def median_of(merged, name):
    return next(r["real_time"] for r in merged["benchmarks"]
                if r["name"] == f"{name}/real_time_median")


def main():
    failures = []

    def check(what, got, want):
        if got != want:
            failures.append(f"{what}: got {got!r}, want {want!r}")

    # Three rounds: the middle one per benchmark, each benchmark on its own.
    m = report.median_round([run({"BM_A": 5, "BM_B": 1}), run({"BM_A": 1, "BM_B": 9}), run({"BM_A": 3, "BM_B": 4})])
    check("3 rounds, BM_A", median_of(m, "BM_A"), 3)
    check("3 rounds, BM_B", median_of(m, "BM_B"), 4)
    check("3 rounds, rows per benchmark", len(m["benchmarks"]), 4)  # mean and median of the kept round
    check("3 rounds, mean row from the kept round", next(r["real_time"] for r in m["benchmarks"]
                                                         if r["name"] == "BM_A/real_time_mean"), 1003)
    check("rounds recorded", m["rounds"], 3)
    # Two rounds: the slower.
    check("2 rounds", median_of(report.median_round([run({"BM_A": 2}), run({"BM_A": 7})]), "BM_A"), 7)
    # A failed round (None) is left out; one good round is returned as it is.
    one = run({"BM_A": 4})
    check("1 good round of 2", report.median_round([None, one]), one)
    check("no round", report.median_round([None]), None)
    # A benchmark that errored in a round is judged by the others.
    bad = run({"BM_A": 1}, {"error_occurred": True})
    check("errored round left out", median_of(report.median_round([bad, run({"BM_A": 6}), run({"BM_A": 8})]), "BM_A"), 8)

    # Host drift: the row's own baseline, 15% apart or more.
    def row(ns, base):
        return {"items_per_second": 1e9 / ns, "label": f"baseline={base}"}
    ours = {"BM_Host_X": {"items_per_second": 1e9 / 10}, "BM_Op": row(50, "BM_Host_X")}
    for real_base, want in ((10, None), (11, None), (12, 1.2), (8, 0.8)):
        real = {"BM_Host_X": {"items_per_second": 1e9 / real_base}, "BM_Op": row(500, "BM_Host_X")}
        got = report.host_drift(ours["BM_Op"], real["BM_Op"], ours, real)
        check(f"drift with the driver's baseline at {real_base} ns", None if got is None else round(got, 3), want)
    check("no baseline, no drift", report.host_drift({"items_per_second": 1.0}, {"items_per_second": 1.0}, {}, {}), None)

    # Kernel rows (issue 38): per core judged for memory-bound kernels only, scaling for all.
    check("kernel verdict, both met", report.kernel_verdict(9.5, 0.85, True), "per core yes; scaling yes")
    check("kernel verdict, both missed", report.kernel_verdict(10.5, 0.75, True), "per core no; scaling no")
    check("kernel verdict, compute-bound", report.kernel_verdict(50.0, 0.9, False), "scaling yes")
    check("kernel verdict, nothing measured", report.kernel_verdict(None, None, True),
          "per core not measured; scaling not measured")
    # The paired counters of BM_Emu_Kernel1T_K decide over the separately timed benchmarks.
    kern = {"BM_Kernel_K": {"items_per_second": 1e9 / 100, "exec_threads": 16},
            "BM_Host_K": {"items_per_second": 1e9 / 200},
            "BM_Emu_Kernel1T_K": {"items_per_second": 1e9 / 1000, "vs_loop": 4.0, "speedup": 12.0, "exec_threads": 16}}
    tn, n, t1, tl, vs_loop, speedup, scaling = report.kernel_ratios(kern, "K")
    check("kernel ratios, paired", (round(tn), n, round(t1), round(tl), vs_loop, speedup, scaling),
          (100, 16, 1000, 200, 4.0, 12.0, 0.75))
    unpaired = {k: {x: v for x, v in r.items() if x not in ("vs_loop", "speedup")} for k, r in kern.items()}
    got = report.kernel_ratios(unpaired, "K")
    check("kernel ratios, unpaired", tuple(round(x, 3) for x in got[4:]), (5.0, 10.0, 0.625))
    one = {"BM_Kernel_K": {"items_per_second": 1e9 / 100, "exec_threads": 1}}
    check("kernel ratios, one thread: no scaling", report.kernel_ratios(one, "K")[4:], (None, None, None))
    # The empty kernel: launch + synchronize at most 2 µs.
    empty = {"BM_Kernel_Empty": {"items_per_second": 1e9 / 1500, "name": "BM_Kernel_Empty"}}
    check("empty kernel met", report.kernel_section(empty, {})[-1].endswith("| yes |"), True)
    empty["BM_Kernel_Empty"]["items_per_second"] = 1e9 / 2500
    check("empty kernel missed", report.kernel_section(empty, {})[-1].endswith("| no |"), True)

    # A kernel whose check failed on our side is a row saying so, never met.
    bad = report.kernel_section(empty, {}, {"BM_Kernel_VectorAdd": "vector_add: c[1] = 0, want 0.75"})
    check("failed kernel row first, empty kernel after", len(bad) - bad.index("|---|---|---|---|---|---|---|---|---|"), 3)
    bad = bad[:-1]
    check("failed kernel row", bad[-1].startswith("| vector add") and "failed (BM_Kernel_VectorAdd: vector_add" in bad[-1]
          and bad[-1].endswith("| no |"), True)

    for f in failures:
        print("FAIL:", f)
    print("report.py checks:", "failed" if failures else "ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
