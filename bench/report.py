#!/usr/bin/env python3
"""Runs the benchmark suite on the emulator and, where a GPU is present, on NVIDIA's driver, and
writes the figures into docs/performance.md.

    bench/report.py [BUILD_DIR]                 # collect into a temporary folder, then render
    bench/report.py collect OUT [--build B] [--real auto|yes|no] [--filter REGEX] [--reps N] [--rounds R]
    bench/report.py render DIR [DIR...] [--out FILE]

`collect` runs every bench_* binary of B/bin twice when NVIDIA's driver is found (and --real is
not `no`): once on NVIDIA's driver and runtime (LD_LIBRARY_PATH names their folders first; the
binaries are linked to the shared libcudart.so.13 and libcuda.so.1), once on ours (B/lib). Each
run is Google Benchmark's JSON, medians of N repetitions, kept as OUT/{ours,real}/<bench>.json
next to OUT/machine.json (CPU, cores, GPU, driver, commit); with --rounds R the two sides take
turns R times and each benchmark keeps its median round. `render` turns one or more such
folders into the Markdown page; every figure the documentation states comes from that page.

Per-operation cost is 1e9 / items_per_second (bench::ops), bandwidth bytes_per_second
(bench::bytes); see bench/bench_common.hpp. The kernel engine's rows (bench_kernels: per core
against a single-threaded loop, scaling over the engine's threads, launch overhead) are judged
within our half of the run; see KERNEL_ROWS and docs/benchmarks.md.
"""
import argparse
import datetime
import glob
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "docs", "performance.md")

# The table (issue 23): label, kind, benchmark (regex over names), how it is compared.
# kind "control": a call whose bar is 10x the real driver's time; "copy": bandwidth whose bar is
# 90% of the best host copy of the same run (of a memcpy timed alongside, where the run has
# bench_copy's BM_Emu_Paired_* form of the row); "alloc": also compared with malloc+free (bar 3x).
KEY_ROWS = (
    ("cudaMallocAsync + cudaFreeAsync, 256 B", "alloc", r"^BM_MallocAsyncFreeAsyncPair/256$"),
    ("cudaMallocAsync + cudaFreeAsync, 1 MiB", "alloc", r"^BM_MallocAsyncFreeAsyncPair/1048576$"),
    ("10k live async allocations, freed scrambled (per call)", "control", r"^BM_MallocAsync10kScrambledFree$"),
    ("event record + synchronize (disable timing)", "control", r"^BM_EventRecordSynchronize/disable_timing$"),
    ("event record + synchronize (timing)", "control", r"^BM_EventRecordSynchronize/timing$"),
    ("idle stream synchronize", "control", r"^BM_StreamSynchronizeIdle$"),
    ("idle stream query", "control", r"^BM_StreamQueryIdle$"),
    ("completed event query", "control", r"^BM_EventQueryCompleted$"),
    ("cuMemGetInfo", "control", r"^BM_MemGetInfo$"),
    ("VMM create+reserve+map+access+unmap+free+release, 2 MiB", "control", r"^BM_VmmCycle/2097152$"),
    ("cudaMalloc + cudaFree, 1 MiB", "control", r"^BM_MallocFree1MiB$"),
    ("stream create + destroy", "control", r"^BM_StreamCreateDestroy$"),
    ("pool create + destroy", "control", r"^BM_MemPoolCreateDestroy$"),
    ("pool export pointer", "control", r"^BM_ExportPointer$"),
    ("pool import pointer (other process), device pool", "control", r"^BM_ImportPointer_Device$"),
    ("pool import pointer (other process), host NUMA pool", "control", r"^BM_ImportPointer_HostNuma$"),
    ("cuInit (fresh process)", "control", r"^BM_FreshProcess/cuInit$"),
    ("first context (fresh process)", "control", r"^BM_FreshProcess/PrimaryCtxRetain_SetCurrent$"),
    ("D2D cudaMemcpy 256 MiB", "copy", r"^BM_MemcpyD2D/268435456$"),
    ("H2D cudaMemcpy 256 MiB, pinned", "copy", r"^BM_MemcpyH2DPinned/268435456$"),
    ("H2D cudaMemcpy 256 MiB, pageable", "copy", r"^BM_MemcpyH2DPageable/268435456$"),
    ("D2H cudaMemcpy 256 MiB, pinned", "copy", r"^BM_MemcpyD2HPinned/268435456$"),
    ("cudaMemset 256 MiB", "copy", r"^BM_Memset/268435456$"),
    ("cuMemsetD32 256 MiB", "copy", r"^BM_MemsetD32/268435456$"),
    ("cudaMemcpyAsync D2D 256 MiB, idle stream", "copy", r"^BM_MemcpyAsyncD2D_IdleStream/268435456$"),
)
CONTROL_BAR = 10.0   # real time / ours
COPY_BAR = 0.90      # ours / best host copy
ALLOC_BAR = 3.0      # ours / malloc+free

# The kernel engine (issue 38, item 9; bench/bench_kernels.cpp): label, benchmark suffix K,
# memory-bound. BM_Kernel_K is a launch + synchronize on the engine's default threads (on a GPU
# machine also the GPU's time), BM_Host_K the same work as a plain single-threaded C++ loop, and
# BM_Emu_Kernel1T_K the engine on one thread (a child process with CUDA_SHIM_EXEC_THREADS=1),
# timed back to back with BM_Kernel_K's launch and the loop: its counters vs_loop (1 thread /
# loop) and speedup (1 thread / default threads) are medians of per-iteration ratios.
KERNEL_ROWS = (
    ("vector add, 16M floats", "VectorAdd", True),
    ("reduction (shared-memory tree + warp shuffle), 16M floats", "Reduce", True),
    ("histogram, 256 bins (shared-memory atomics), 16M bytes", "Histogram", True),
    ("tiled matmul 512×512 (16×16 tiles in shared memory)", "Matmul", False),
)
EMPTY_KERNEL = "BM_Kernel_Empty"
PER_CORE_BAR = 10.0     # memory-bound kernels: 1 engine thread / single-threaded loop, at most
SCALING_BAR = 0.8       # (1 thread / N threads) / N, at least
LAUNCH_BAR_NS = 2000.0  # empty kernel launch + synchronize, at most


# ------------------------------------------------------------------ collecting

def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, check=False, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True).stdout.strip()
    except OSError:
        return ""


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def nvidia_dirs():
    """Folders of NVIDIA's libcuda.so.1 and libcudart.so.13, or None when either is missing."""
    drv = None
    for line in sh("ldconfig -p").splitlines():
        m = re.search(r"libcuda\.so\.1 .*=> (\S+)", line)
        if m and "x86-64" in line:
            drv = os.path.dirname(m.group(1))
            break
    cands = [os.environ.get("NVIDIA_CUDART_DIR", ""), os.path.join(os.environ.get("CUDA_HOME", "/nonexistent"), "lib64"),
             "/usr/local/cuda/lib64", *sorted(glob.glob("/usr/local/cuda-13*/lib64"), reverse=True),
             *sorted(glob.glob("/usr/local/cuda*/targets/x86_64-linux/lib"), reverse=True)]
    rt = next((d for d in cands if d and os.path.exists(os.path.join(d, "libcudart.so.13"))), None)
    if not drv or not rt or not shutil.which("nvidia-smi") or not sh("nvidia-smi -L"):
        return None
    return drv, rt


def machine(real, build):
    # A pack (bench/pack.sh) names the commit its binaries were built from; a build dir is HEAD's.
    stamp = os.path.join(build, "commit.txt")
    commit = open(stamp).read().strip() if os.path.exists(stamp) else sh(f"git -C {ROOT} rev-parse --short HEAD")
    m = {"date": datetime.date.today().isoformat(), "cpu": cpu_model(), "cpus": os.cpu_count(),
         "kernel": platform.release(), "commit": commit or "unknown"}
    if real:
        m["gpu"] = sh("nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1")
    return m


def run_bench(exe, env, extra, reps, min_time):
    cmd = [exe, "--benchmark_format=json", f"--benchmark_min_time={min_time}", f"--benchmark_repetitions={reps}",
           "--benchmark_report_aggregates_only=true", "--benchmark_counters_tabular=false", *extra]
    try:
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=float(os.environ.get("CUDA_SHIM_BENCH_TIMEOUT", "300")))
    except subprocess.TimeoutExpired:
        sys.stderr.write(f"report.py: {os.path.basename(exe)} ran out of time\n")
        return None
    if p.returncode == 0 and "Failed to match any benchmarks" in p.stderr:
        return {"benchmarks": []}
    if p.returncode != 0 or not p.stdout.strip():
        sys.stderr.write(f"report.py: {os.path.basename(exe)} failed (rc {p.returncode}):\n{p.stderr[-3000:]}\n")
        return None
    return json.loads(p.stdout)


def median_round(rounds):
    """One binary's JSON from several rounds: for each benchmark, the aggregate rows of the round
    whose median time is the median over the rounds (the slower middle one for an even count), so
    that every figure of a row comes from one run."""
    rounds = [r for r in rounds if r]
    if len(rounds) < 2:
        return rounds[0] if rounds else None
    by_round = []
    for data in rounds:
        rows = {}
        for r in data.get("benchmarks", []):
            rows.setdefault(clean(r["name"]), []).append(r)
        by_round.append(rows)
    merged = dict(rounds[0], benchmarks=[])
    for name in by_round[0]:
        cands = []
        for rows in by_round:
            med = next((r for r in rows.get(name, []) if r.get("aggregate_name", "median") == "median"), None)
            if med and not med.get("error_occurred"):
                cands.append((med["real_time"], rows[name]))
        if not cands:
            merged["benchmarks"] += by_round[0][name]
            continue
        cands.sort(key=lambda c: c[0])
        merged["benchmarks"] += cands[len(cands) // 2][1]
    merged["rounds"] = len(rounds)
    return merged


def collect(out, build, real, filt, reps, min_time=0.3, only="", rounds=1):
    """Returns the number of binaries that failed. With rounds > 1 the two drivers take turns,
    round after round, and each benchmark keeps its median round: a host whose speed moves over
    minutes then weighs on both halves alike."""
    build = os.path.abspath(build)
    exes = sorted(glob.glob(os.path.join(build, "bin", "bench_*")))
    if only:
        exes = [e for e in exes if os.path.basename(e) in only.split(",")]
    if not exes:
        sys.exit(f"report.py: no bench_* in {build}/bin; build them: cmake --build {build} -j2")
    dirs = nvidia_dirs() if real != "no" else None
    if real == "yes" and not dirs:
        sys.exit("report.py: --real yes, but NVIDIA's driver (nvidia-smi, libcuda.so.1, libcudart.so.13) was not found")
    deps = os.environ.get("CUDA_SHIM_BENCH_DEPS", "")  # libraries the machine lacks (libbenchmark)
    base = {k: v for k, v in os.environ.items()
            if not k.startswith("CUDA_SHIM_") and k not in ("LD_PRELOAD", "LD_LIBRARY_PATH")}
    runs = {}
    if dirs:  # NVIDIA's first: a run cut short by a time limit still holds the pair's rarer half
        runs["real"] = ":".join(dirs)
    runs["ours"] = os.path.join(build, "lib")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "machine.json"), "w") as f:
        json.dump(machine(bool(dirs), build), f, indent=1)
    extra = [f"--benchmark_filter={filt}"] if filt else []
    failed = 0
    got = {}  # (side, binary) -> one JSON per round
    for rnd in range(1, rounds + 1):
        for side, libs in runs.items():
            os.makedirs(os.path.join(out, side), exist_ok=True)
            env = dict(base, LD_LIBRARY_PATH=":".join(x for x in (libs, deps) if x))
            for exe in exes:
                data = run_bench(exe, env, extra, reps, min_time)
                failed += data is None
                got.setdefault((side, os.path.basename(exe)), []).append(data)
                # Written after every round: a run cut short by a time limit keeps what it has.
                merged = median_round(got[(side, os.path.basename(exe))])
                if merged is not None:
                    with open(os.path.join(out, side, os.path.basename(exe) + ".json"), "w") as f:
                        json.dump(merged, f, indent=1)
                tag = f" (round {rnd} of {rounds})" if rounds > 1 else ""
                print(f"report.py: {side:4} {os.path.basename(exe)}{tag}: {'ok' if data else 'FAILED'}", flush=True)
    return failed


# ------------------------------------------------------------------ rendering

def clean(name):
    name = re.sub(r"/(real_time|manual_time)", "", name)
    name = re.sub(r"/iterations:\d+", "", name)
    return re.sub(r"_(median|mean|stddev|cv)$", "", name)


def load(folder, side):
    """{benchmark name: its median row} over every binary of one side."""
    rows = {}
    for path in sorted(glob.glob(os.path.join(folder, side, "*.json"))):
        binary = os.path.basename(path)[:-5]
        with open(path) as f:
            data = json.load(f)
        for r in data.get("benchmarks", []):
            if r.get("error_occurred"):
                continue
            if r.get("run_type") == "aggregate" and r.get("aggregate_name") != "median":
                continue
            rows[clean(r["name"])] = dict(r, binary=binary)
    return rows


def load_errors(folder, side):
    """{benchmark name: the error it stopped with} over every binary of one side (a kernel whose
    result check failed, say)."""
    errs = {}
    for path in sorted(glob.glob(os.path.join(folder, side, "*.json"))):
        with open(path) as f:
            for r in json.load(f).get("benchmarks", []):
                if r.get("error_occurred"):
                    errs[clean(r["name"])] = r.get("error_message", "error")
    return errs


def per_op_ns(r):
    ips = r.get("items_per_second")
    return 1e9 / ips if ips else None


def gbps(r):
    bps = r.get("bytes_per_second")
    return bps / 1e9 if bps else None


def fmt_ns(ns):
    if ns is None:
        return ""
    for unit, div in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= div:
            return f"{ns / div:.3g} {unit}"
    return f"{ns:.3g} ns"


def fmt_x(v):
    return "" if v is None else (f"{v:.3g}×" if v < 100 else f"{v:.0f}×")


def best_host_copy(rows, name=None):
    """The best plain memcpy over 1..N threads of the same size as benchmark `name` (its first
    numeric argument), in this run: small sizes copy in cache, so only equal sizes compare."""
    size = re.search(r"/(\d+)", name or "")
    best = [gbps(r) for n, r in rows.items() if n.startswith("BM_Host_Memcpy/")
            and (not size or n.startswith(f"BM_Host_Memcpy/{size.group(1)}/")) and gbps(r)]
    return max(best) if best else None


def baseline_of(r, rows):
    m = re.match(r"baseline=(\S+)", r.get("label", ""))
    return rows.get(m.group(1)) if m else None


# How far apart a host baseline may run in the two halves of a run before a key row is also
# judged by each side's multiple of its own baseline.
HOST_DRIFT = 1.15


def host_drift(o, r, ours, real):
    """How much slower the host ran in the driver's half than in ours, measured by the row's own
    BM_Host_* baseline (each half ran it in the same binary); None when within HOST_DRIFT."""
    bo, br = baseline_of(o, ours), (baseline_of(r, real) if r else None)
    if not bo or not br or not per_op_ns(bo) or not per_op_ns(br):
        return None
    d = per_op_ns(br) / per_op_ns(bo)
    return d if max(d, 1 / d) > HOST_DRIFT else None


def rounds_of(folders):
    """(folder, rounds) for each folder collected with --rounds > 1."""
    out = []
    for d in folders:
        n = 1
        for path in glob.glob(os.path.join(d, "*", "*.json")):
            with open(path) as f:
                n = max(n, json.load(f).get("rounds", 1))
        if n > 1:
            out.append((d, n))
    return out


def render(folders, out):
    ours, real, mach, errors = {}, {}, {}, {}
    drifted = False
    for d in folders:
        errors.update(load_errors(d, "ours"))
        ours.update(load(d, "ours"))
        real.update(load(d, "real"))
        with open(os.path.join(d, "machine.json")) as f:
            mach.setdefault("list", []).append(json.load(f))
    m = mach["list"][0]
    # Folders measured at different commits say which is which.
    by_commit = {}
    for d, x in zip(folders, mach["list"]):
        by_commit.setdefault(x.get("commit", "?"), []).append(os.path.basename(os.path.normpath(d)))
    commits = (f"`{m['commit']}`" if len(by_commit) == 1 else
               ", ".join(f"`{c}` ({', '.join(ds)})" for c, ds in by_commit.items()))
    gpu = next((x.get("gpu") for x in mach["list"] if x.get("gpu")), None)
    L = ["# Performance", "",
         "<!-- generated by bench/report.py from Google Benchmark JSON; do not edit by hand -->",
         f"Measured {m['date']} at commit {commits} on {m['cpu']} ({m['cpus']} CPUs, Linux {m['kernel']})"
         + (f", with a GPU in the same machine ({gpu})" if gpu else ", no GPU") + ". "
         f"Each figure is the median of the repetitions of `bench/report.py collect` "
         f"(rendered from {', '.join('`' + os.path.relpath(os.path.abspath(d), ROOT) + '`' for d in folders)})"
         + (": the same benchmark binaries ran on NVIDIA's driver and runtime and then on cuda-shim, "
            "one after the other." if real else "; no real driver was present, so there is no real-driver column.")
         + "".join(f" In `{os.path.basename(os.path.normpath(d))}` the two took turns {n} times, and each benchmark "
                   "shows its median round." for d, n in rounds_of(folders)),
         "", "## Key figures", "",
         "| operation | cuda-shim | NVIDIA driver | faster than the driver | bar | met |",
         "|---|---|---|---|---|---|"]
    for label, kind, rx in KEY_ROWS:
        name = next((n for n in ours if re.search(rx, n)), None)
        if not name:
            continue
        o, r = ours[name], real.get(name)
        if not per_op_ns(o) and not gbps(o):
            continue
        if kind == "copy":
            host_best = best_host_copy(ours, name)
            og, rg = gbps(o), gbps(r) if r else None
            ratio = og / host_best if og and host_best else None
            # The same operation paired with a memcpy at the same moment (bench_copy's BM_Emu_Paired_*;
            # BM_Paired_* in results stored before they were emulator-only) decides where it ran: a
            # bar from another minute moves with the host's neighbours.
            pair = (ours.get(name.replace("BM_", "BM_Emu_Paired_", 1))
                    or ours.get(name.replace("BM_", "BM_Paired_", 1)))
            if pair and pair.get("vs_host"):
                ratio = pair["vs_host"]
                where = (f"paired: {gbps(pair):.3g} GB/s, {ratio:.0%} of one {pair['host_threads']:.0f}-thread memcpy "
                         f"of the same bytes timed alongside, {pair['host_GBps']:.3g} GB/s; independent per-thread "
                         f"memcpys of the sweep: {host_best:.3g} GB/s")
            else:
                where = f"{ratio:.0%} of the best host copy, {host_best:.3g} GB/s"
            met = "yes" if ratio is not None and ratio >= COPY_BAR else "no"
            L.append(f"| {label} | {og:.3g} GB/s ({where}) | "
                     f"{'' if rg is None else f'{rg:.3g} GB/s'} | {fmt_x(og / rg if rg else None)} | "
                     f"≥{COPY_BAR:.0%} of host copy | {met} |")
            continue
        on, rn = per_op_ns(o), per_op_ns(r) if r else None
        x = rn / on if rn and on else None
        bar = f"≥{CONTROL_BAR:.0f}× driver"
        shown, drift = fmt_x(x), host_drift(o, r, ours, real)
        if x is not None and drift is not None:
            shown += f" ({fmt_x(x / drift)} as multiples of each side's own `{baseline_of(o, ours)['name'].split('/')[0]}`)"
            x = min(x, x / drift)
            drifted = True
        met = "" if x is None else ("yes" if x >= CONTROL_BAR else "no")
        if kind == "alloc":
            b = baseline_of(o, ours)
            vs = on / per_op_ns(b) if b and per_op_ns(b) else None
            bar += f"; ≤{ALLOC_BAR:.0f}× malloc+free"
            if vs is not None:
                met = (met + ("; " if met else "")) + f"{vs:.2g}× malloc " + ("yes" if vs <= ALLOC_BAR else "no")
        L.append(f"| {label} | {fmt_ns(on)} | {fmt_ns(rn)} | {shown} | {bar} | {met} |")
    if drifted:
        L += ["", f"Where a row names a second ratio, its host baseline (the `BM_Host_*` benchmark the row "
              f"names as its baseline) ran more than {HOST_DRIFT - 1:.0%} apart in the driver's half and in "
              "ours: the host itself was faster in one half. The second ratio compares each side's multiple "
              "of its own baseline, and the row counts as met only when both ratios clear the bar."]
    L += kernel_section(ours, real, errors)
    L += ["", "## Every benchmark", "",
          "Per operation (1e9 / items per second) or bandwidth; `vs baseline` is ours / the `BM_Host_*` "
          "benchmark the row names, measured in the same run (for bandwidth: ours / baseline).", "",
          "| binary | benchmark | cuda-shim | NVIDIA driver | driver / cuda-shim | baseline | vs baseline | counters |",
          "|---|---|---|---|---|---|---|---|"]
    for name, o in ours.items():
        r = real.get(name)
        b = baseline_of(o, ours)
        if gbps(o):
            mine, theirs = f"{gbps(o):.3g} GB/s", (f"{gbps(r):.3g} GB/s" if r and gbps(r) else "")
            x = gbps(o) / gbps(r) if r and gbps(r) else None
            vs = gbps(o) / gbps(b) if b and gbps(b) else None
        else:
            on, rn = per_op_ns(o), (per_op_ns(r) if r else None)
            mine, theirs = fmt_ns(on), fmt_ns(rn)
            x = rn / on if on and rn and not name.startswith("BM_Host_") else None
            vs = on / per_op_ns(b) if on and b and per_op_ns(b) else None
        skip = {"iterations", "real_time", "cpu_time", "time_unit", "items_per_second", "bytes_per_second",
                "repetitions", "repetition_index", "threads", "family_index", "per_family_instance_index",
                "run_name", "run_type", "aggregate_name", "aggregate_unit", "name", "label", "binary"}
        counters = ", ".join(f"{k} {v:.3g}" for k, v in o.items() if k not in skip and isinstance(v, (int, float)))
        base = re.sub(r"^baseline=", "", o.get("label", ""))
        L.append(f"| `{o['binary']}` | {name} | {mine} | {theirs} | {fmt_x(x)} | {base} | "
                 f"{'' if vs is None else f'{vs:.3g}'} | {counters} |")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        f.write("\n".join(L) + "\n")
    print(f"report.py: wrote {out} ({len(ours)} benchmarks, {len(real)} on the real driver)")
    if os.path.abspath(out) == os.path.abspath(OUT):
        update_readme(L, m, gpu)


def kernel_verdict(vs_loop, scaling, memory_bound):
    """The kernel row's met cell: per core (memory-bound kernels only) and scaling, each judged
    where it was measured."""
    parts = []
    if memory_bound:
        parts.append("per core " + ("not measured" if vs_loop is None else
                                    "yes" if vs_loop <= PER_CORE_BAR else "no"))
    parts.append("scaling " + ("not measured" if scaling is None else "yes" if scaling >= SCALING_BAR else "no"))
    return "; ".join(parts)


def kernel_ratios(ours, key):
    """(T on N threads ns, N, T on 1 thread ns, loop ns, 1 thread / loop, speedup 1 thread / N
    threads, scaling = speedup / N) for kernel K on our side; None where not measured. The paired
    counters of BM_Emu_Kernel1T_K decide; without them (older runs) the separate benchmarks."""
    o, one, host = ours.get(f"BM_Kernel_{key}"), ours.get(f"BM_Emu_Kernel1T_{key}"), ours.get(f"BM_Host_{key}")
    tn = per_op_ns(o) if o else None
    t1 = per_op_ns(one) if one else None
    tl = per_op_ns(host) if host else None
    n = (o or one or {}).get("exec_threads")
    vs_loop = (one.get("vs_loop") if one else None) or (t1 / tl if t1 and tl else None)
    speedup = (one.get("speedup") if one else None) or (t1 / tn if t1 and tn else None)
    scaling = speedup / n if speedup and n and n > 1 else None
    return tn, n, t1, tl, vs_loop, speedup, scaling


def kernel_section(ours, real, errors=None):
    """The kernel engine's rows (issue 38): ours against a single-threaded C++ loop per core,
    scaling over the engine's threads, launch overhead, and the GPU's time where the run has it.
    A kernel that failed on our side (its result check, say) is a row that says so, not met."""
    rows = []
    errors = errors or {}
    for label, key, memory_bound in (*KERNEL_ROWS, ("empty kernel <<<1,1>>>: launch + cuCtxSynchronize", "Empty", None)):
        err = next((f"{n}: {errors[n]}" for n in (f"BM_Kernel_{key}", f"BM_Emu_Kernel1T_{key}") if n in errors), None)
        if err:
            rows.append(f"| {label} | failed ({err.replace('|', '/')}) | | | | | | | no |")
            continue
        r = real.get(f"BM_Kernel_{key}")
        g = per_op_ns(r) if r else None
        if memory_bound is None:  # the empty kernel: launch overhead
            en = per_op_ns(ours.get(EMPTY_KERNEL) or {})
            if en:
                gpu = "" if g is None else f"{fmt_ns(g)} ({fmt_x(g / en)} cuda-shim's time)"
                rows.append(f"| {label} | {fmt_ns(en)} | | | | | {gpu} | "
                            f"≤{fmt_ns(LAUNCH_BAR_NS)} | {'yes' if en <= LAUNCH_BAR_NS else 'no'} |")
            continue
        tn, n, t1, tl, vs_loop, speedup, scaling = kernel_ratios(ours, key)
        if tn is None and t1 is None:
            continue
        shim = fmt_ns(tn) + (f" ({n:.0f} threads)" if tn and n else "")
        scale = "" if speedup is None else (f"{fmt_x(speedup)} on {n:.0f} threads" if n else fmt_x(speedup))
        if scaling is not None:
            scale += f" = {scaling:.2f} of linear"
        gpu = "" if g is None else fmt_ns(g) + (f" ({fmt_x(tn / g)} faster than cuda-shim)" if tn else "")
        goal = (f"≤{PER_CORE_BAR:.0f}× loop per core; ≥{SCALING_BAR:.1f}× linear scaling" if memory_bound else
                f"≥{SCALING_BAR:.1f}× linear scaling (compute-bound: per core not a goal)")
        rows.append(f"| {label} | {shim} | {fmt_ns(t1)} | {fmt_ns(tl)} | {fmt_x(vs_loop)} | {scale} | {gpu} | "
                    f"{goal} | {kernel_verdict(vs_loop, scaling, memory_bound)} |")
    if not rows:
        return []
    return ["", "## Kernels", "",
            "The PTX engine (`bench/bench_kernels.cpp`; issue 38's goals): each kernel as a launch + "
            "`cuCtxSynchronize` on the engine's default threads, on one engine thread (a child process "
            "with `CUDA_SHIM_EXEC_THREADS=1`), and the same work as a plain single-threaded C++ loop on the "
            "same data. *Per core* is one engine thread's time over the loop's, *scaling* one engine "
            "thread's time over the default threads' (as a fraction of linear); both are medians of "
            "ratios of runs timed back to back (`BM_Emu_Kernel1T_*`), so they are judged within cuda-shim's "
            "half of the run. The GPU column is NVIDIA's driver running the same PTX on the GPU, not judged.",
            "",
            "| kernel | cuda-shim | 1 engine thread | C++ loop, 1 thread | per core: 1 thread / loop "
            "| scaling: 1 thread / all | GPU (NVIDIA driver) | goal | met |",
            "|---|---|---|---|---|---|---|---|---|", *rows]


README = os.path.join(ROOT, "README.md")
BEGIN, END = "<!-- performance:begin (bench/report.py) -->", "<!-- performance:end -->"


def update_readme(lines, m, gpu):
    """Copies the key table's rows into README.md between the markers (tests/docs/check_docs.py
    checks that every figure there is a row of docs/performance.md)."""
    start = lines.index("## Key figures") + 2
    end = lines.index("", start)
    block = [BEGIN, f"Measured by `bench/report.py` on {m['cpu']} ({m['cpus']} CPUs)"
             + (f" with {gpu}" if gpu else "") + f", {m['date']}; all figures in "
             "[docs/performance.md](docs/performance.md).", "", *lines[start:end], END]
    with open(README, encoding="utf-8") as f:
        text = f.read()
    if BEGIN not in text or END not in text:
        print("report.py: README.md has no performance markers; not updated")
        return
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    with open(README, "w", encoding="utf-8") as f:
        f.write(head + "\n".join(block) + tail)
    print("report.py: updated README.md's performance table")


def main():
    argv = sys.argv[1:]
    if argv and argv[0] == "collect":
        ap = argparse.ArgumentParser(prog="report.py collect")
        ap.add_argument("out")
        ap.add_argument("--build", default=os.path.join(ROOT, "build"))
        ap.add_argument("--real", choices=("auto", "yes", "no"), default="auto")
        ap.add_argument("--filter", default="")
        ap.add_argument("--reps", type=int, default=3)
        ap.add_argument("--min-time", type=float, default=0.3, help="seconds per benchmark (Google Benchmark)")
        ap.add_argument("--only", default="", help="comma-separated binaries (default: every bench_*)")
        ap.add_argument("--rounds", type=int, default=1,
                        help="run both drivers this many times, taking turns; each benchmark keeps its median round")
        a = ap.parse_args(argv[1:])
        sys.exit(1 if collect(a.out, a.build, a.real, a.filter, a.reps, a.min_time, a.only, max(1, a.rounds)) else 0)
    elif argv and argv[0] == "render":
        ap = argparse.ArgumentParser(prog="report.py render")
        ap.add_argument("dirs", nargs="+")
        ap.add_argument("--out", default=OUT)
        a = ap.parse_args(argv[1:])
        render(a.dirs, a.out)
    else:
        build = argv[0] if argv else os.path.join(ROOT, "build")
        with tempfile.TemporaryDirectory() as d:
            if collect(d, build, "auto", "", 3):
                sys.exit("report.py: a benchmark binary failed; docs/performance.md not written")
            render([d], OUT)


if __name__ == "__main__":
    main()
