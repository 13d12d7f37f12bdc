#!/usr/bin/env python3
"""Dev-time generator for emu/abi/procaddr.def, the cuGetProcAddress table.

The build never runs this. Two sources, the measurement winning where both speak:
  * inference: the toolkit's PFN_<base>_v<version>[_ptds|_ptsz] typedefs (cuda*Typedefs.h).
    For every base name, its non-PTDS versions in ascending order are served by its exported
    names base, base_v2, base_v3, ... in ascending order (checked: a 1:1 match for every base
    in CUDA 13.0); a _ptds/_ptsz typedef at version V is served by (the symbol serving V) +
    that suffix. The CUDA 13.3 logical endpoint entries start at 13030.
  * measurement (--measured .probe/out/procaddr.tsv): cuGetProcAddress_v2 on a real driver,
    rows `base flags version ret status symbol`, printed when the answer changes.

Usage: tools/gen/gen_procaddr.py [--cuda /usr/local/cuda] [--measured FILE] [--out emu/abi]

Output rows (the includer defines the macros):
  PROC(base, CLASS, version, symbol)          from `version` on, answer &symbol (status 0)
  PROC_NONE(base, CLASS, version, ret, status) from `version` on, answer null pfn, ret, status
  PROC_FLAGS(value, CLASS)                     flags value -> class (measured; else inferred)
CLASS: DEFAULT (flags 0), LEGACY (flags 1), PTDS (flags 2), INVALID (flags rejected).
A base with no row for the requested class uses its DEFAULT rows.
"""
import argparse
import collections
import glob
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gen_symbols import COPY_WITH_ATTRIBUTES, LOGICAL_ENDPOINT  # noqa: E402

CLASS_OF_FLAGS = {0: "DEFAULT", 1: "LEGACY", 2: "PTDS"}
# The cudaVersion values .probe/probe.cpp asks at (keep in sync with its VERSIONS).
PROBE_GRID = [0, 1000, 2000, 3000, 3010, 3020, 3050, 4000, 4010, 4020, 5000, 5050, 6000, 6050,
              7000, 7050, 8000, 9000, 9010, 9020, 10000, 10010, 10020, 11000, 11010, 11020, 11030,
              11040, 11050, 11060, 11070, 11080, 12000, 12010, 12020, 12030, 12040, 12050, 12060,
              12070, 12080, 12090, 13000, 13010, 13030]


def exported(def_path):
    return [m.group(1) for m in re.finditer(r"^CU_SYM\((\w+)\)", open(def_path).read(), re.M)]


def infer(cuda, syms):
    symset = set(syms)
    plain = collections.defaultdict(set)
    ptds = collections.defaultdict(set)
    for h in glob.glob(os.path.join(cuda, "include", "cuda*Typedefs.h")):
        for b, v, s in re.findall(r"\bPFN_(\w+?)_v(\d+)(_ptds|_ptsz)?\)", open(h).read()):
            (ptds[b] if s else plain[b]).add((int(v), s))
    for n in LOGICAL_ENDPOINT:
        plain[n].add((13030, ""))
    for n in COPY_WITH_ATTRIBUTES:  # CUDA 13.2: a plain and a per-thread form each
        if n.endswith("_ptsz"):
            ptds[n[:-5]].add((13020, "_ptsz"))
        else:
            plain[n].add((13020, ""))
    rows = {}  # (base, class) -> [(version, symbol)]
    problems = []
    for b in sorted(plain):
        vs = sorted(v for v, _ in plain[b])
        names = [x for x in symset if x == b or re.fullmatch(re.escape(b) + r"_v\d+", x)]
        names.sort(key=lambda x: 0 if x == b else int(x.rsplit("_v", 1)[1]))
        if len(vs) != len(names):
            problems.append("%s: versions %s vs exported %s" % (b, vs, names))
            continue
        rows[(b, "DEFAULT")] = list(zip(vs, names))
    for b in sorted(ptds):
        base_rows = rows.get((b, "DEFAULT"), [])
        out = []
        # Measured: below the first per-thread variant, flags 2 gets NOT_SUFFICIENT, with no
        # fallback to the legacy symbol; so the PTDS class holds the per-thread rows only.
        for v, suf in sorted(ptds[b]):
            serving = [s for bv, s in base_rows if bv <= v]
            if not serving:
                problems.append("%s%s@%d: no plain version below" % (b, suf, v))
                continue
            sym = serving[-1] + suf
            if sym not in symset:
                problems.append("%s@%d: %s not exported" % (b, v, sym))
                continue
            out.append((v, sym))
        if out:
            rows[(b, "PTDS")] = out
    return rows, problems


def parse_measured(path):
    """-> {(base, flags): [(version, ret, status, symbol)]}, plus the raw special sections."""
    data = collections.defaultdict(list)
    extra = []
    section = None
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("##"):
            section = line
            extra.append(line)
            continue
        if line.startswith("#") or not line.strip():
            continue
        if section is None:
            f = line.split("\t")
            if len(f) < 6:
                continue
            data[(f[0], int(f[1]))].append((int(f[2]), int(f[3]), int(f[4]), f[5]))
        else:
            extra.append(line)
    return data, extra


def pick_symbol(raw, base, version, inferred, symset, warn):
    """A measured answer names the exported symbol(s) at that address; choose one we export."""
    if raw.startswith("~") or raw == "?":
        warn.append("%s@%d resolved to a non-exported address %s; using inference" % (base, version, raw))
        return inferred
    cands = [c for c in raw.split("|") if c in symset]
    if not cands:
        warn.append("%s@%d -> %s not in driver_symbols.def" % (base, version, raw))
        return None
    if inferred in cands:
        return inferred
    same = [c for c in cands if re.fullmatch(re.escape(base) + r"(_v\d+)?(_ptds|_ptsz)?", c)]
    return (same or cands)[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cuda", default="/usr/local/cuda")
    ap.add_argument("--measured", default=None)
    ap.add_argument("--out", default=os.path.join(HERE, "..", "..", "emu", "abi"))
    ap.add_argument("--measured-driver-version", type=int, default=13000)
    a = ap.parse_args()
    syms = exported(os.path.join(a.out, "driver_symbols.def"))
    symset = set(syms)
    inferred, problems = infer(a.cuda, syms)
    for p in problems:
        print("inference:", p, file=sys.stderr)

    def inferred_at(base, cls, v):
        r = [s for bv, s in inferred.get((base, cls), []) + (inferred.get((base, "DEFAULT"), []) if cls != "DEFAULT" else []) if bv <= v]
        return r[-1] if r else None

    out_rows = []   # (base, class, version, kind, payload)
    flag_rules = {0: "DEFAULT", 1: "LEGACY", 2: "PTDS", "other": "INVALID"}
    notes = []
    source = "inferred from the CUDA 13.0 toolkit's cuda*Typedefs.h"
    if a.measured and os.path.exists(a.measured):
        source = "measured on a real driver (%s), logical endpoint and 13.2 copy-with-attributes rows inferred" % os.path.basename(a.measured)
        data, extra = parse_measured(a.measured)
        warn = []
        bases = sorted(set(b for b, _ in data))
        top = a.measured_driver_version
        timelines = {}
        for b in bases:
            for fl in sorted(set(f for bb, f in data if bb == b)):
                tl = []
                for v, ret, st, sym in data[(b, fl)]:
                    if v > top:
                        continue  # above the measured driver: the generic INVALID_VALUE rule
                    tl.append((v, ret, st, sym))
                timelines[(b, fl)] = tl
        # flags classes beyond 0/1/2: same as which?
        for fl in sorted(set(f for _, f in data) - {0, 1, 2}):
            same = {c: all(timelines.get((b, fl)) == timelines.get((b, c)) for b in bases) for c in (0, 1, 2)}
            rets = set(r for b in bases for (_, r, _, _) in timelines.get((b, fl), []))
            if same[2]:
                flag_rules[fl] = "PTDS"
            elif same[1]:
                flag_rules[fl] = "LEGACY"
            elif same[0]:
                flag_rules[fl] = "DEFAULT"
            elif rets and 0 not in rets:
                flag_rules[fl] = "INVALID"
                notes.append("flags %d -> ret %s for every name" % (fl, sorted(rets)))
            else:
                flag_rules[fl] = "DEFAULT"
                notes.append("flags %d: no single rule matched; treated as DEFAULT (check!)" % fl)
            if fl == max(set(f for _, f in data)):
                flag_rules["other"] = flag_rules[fl]
        # The probe samples a grid of versions (PROBE_GRID); a change seen at grid point v
        # happened somewhere after the previous grid point. Where the typedefs place the same
        # symbol's introduction inside that gap, take their (exact) version.
        def refine(b, cls, v, sym):
            below = [g for g in PROBE_GRID if g < v]
            prev = below[-1] if below else -1
            for bv, s in inferred.get((b, cls), []) + inferred.get((b, "DEFAULT"), []):
                if s == sym and prev < bv <= v:
                    if bv != v:
                        refined.append("%s/%s %s: %d -> %d" % (b, cls, sym, v, bv))
                    return bv
            return v
        refined = []
        for b in bases:
            base_tl = timelines.get((b, 0), [])
            for fl, cls in ((0, "DEFAULT"), (1, "LEGACY"), (2, "PTDS")):
                tl = timelines.get((b, fl))
                if tl is None or (fl != 0 and tl == base_tl):
                    continue
                for i, (v, ret, st, sym) in enumerate(tl):
                    if ret == 0 and st == 0 and sym not in ("-", "(untouched)"):
                        chosen = pick_symbol(sym, b, v, inferred_at(b, cls, v), symset, warn)
                        if chosen:
                            out_rows.append((b, cls, refine(b, cls, v, chosen), "sym", chosen))
                        continue
                    if i == 0 and ret == 0 and st == 2 and sym == "-":
                        continue  # implied: before a base's first row the answer is NOT_SUFFICIENT
                    out_rows.append((b, cls, v, "none", (ret, st)))
            # a base that is never found in any version needs no rows at all
        out_rows = [r for r in out_rows if not (r[3] == "none" and all(
            rr[3] == "none" and rr[4][1] == 1 for rr in out_rows if rr[0] == r[0]))]
        for r in refined:
            print("refined:", r, file=sys.stderr)
        for w in warn:
            print("measured:", w, file=sys.stderr)
        measured_bases = set(r[0] for r in out_rows)
        for (b, cls), rows in sorted(inferred.items()):
            if b in LOGICAL_ENDPOINT and b not in measured_bases:
                for v, s in rows:
                    out_rows.append((b, cls, v, "sym", s))
        missing = sorted(set(b for b, _ in inferred) - set(bases) - set(LOGICAL_ENDPOINT))
        if missing:
            notes.append("%d base names in the toolkit typedefs were not measured (left out)" % len(missing))
            print("not measured:", " ".join(missing), file=sys.stderr)
    else:
        for (b, cls), rows in sorted(inferred.items()):
            for v, s in rows:
                out_rows.append((b, cls, v, "sym", s))

    order = {"DEFAULT": 0, "LEGACY": 1, "PTDS": 2}
    out_rows.sort(key=lambda r: (r[0], order[r[1]], r[2]))
    lines = [
        "// cuGetProcAddress table: for each base name and flag class, the version from which each",
        "// answer holds. GENERATED by tools/gen/gen_procaddr.py, " + source + ".",
        "// Do not edit by hand; regenerate (dev-time only, the build never needs NVIDIA's files) with",
        "//   python3 tools/gen/gen_procaddr.py --measured .probe/out/procaddr.tsv",
        "// (without --measured it infers the same table from the toolkit's typedefs, except that",
        "// the probe's coarse version grid is refined by them).",
        "// PROC(base, CLASS, version, symbol) / PROC_NONE(base, CLASS, version, ret, status) /",
        "// PROC_FLAGS(value, CLASS): see tools/gen/gen_procaddr.py. Sorted by base name (strcmp).",
    ]
    for n in notes:
        lines.append("// note: " + n)
    lines.append("#ifndef PROC_FLAGS\n#define PROC_FLAGS(value, cls)\n#endif")
    lines.append("#ifndef PROC_NONE\n#define PROC_NONE(base, cls, version, ret, status)\n#endif")
    lines.append("#ifndef PROC\n#define PROC(base, cls, version, symbol)\n#endif")
    for k in (0, 1, 2, 3, 4):
        if k in flag_rules:
            lines.append("PROC_FLAGS(%d, %s)" % (k, flag_rules[k]))
    lines.append("PROC_FLAGS(-1, %s)  // any other flags value" % flag_rules["other"])
    for b, cls, v, kind, p in out_rows:
        if kind == "sym":
            lines.append('PROC("%s", %s, %d, %s)' % (b, cls, v, p))
        else:
            lines.append('PROC_NONE("%s", %s, %d, %d, %d)' % (b, cls, v, p[0], p[1]))
    lines.append("#undef PROC\n#undef PROC_NONE\n#undef PROC_FLAGS")
    open(os.path.join(a.out, "procaddr.def"), "w").write("\n".join(lines) + "\n")
    print("procaddr.def: %d rows, %d base names (%s)" % (len(out_rows), len(set(r[0] for r in out_rows)), source))


if __name__ == "__main__":
    main()
