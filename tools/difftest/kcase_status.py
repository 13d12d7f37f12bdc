#!/usr/bin/env python3
"""Sets the status of recorded kernel cases from a replay's divergences, so a GPU recording can
be kept as CTest data: cases the emulator reproduces stay `recorded`; the others become
`open: ...`, reported by `difftest kernel replay` but not failed, naming what diverged (the
minimized case's instructions when one exists) until the engine is fixed.

  tools/difftest/kcase_status.py RECORDED_DIR DIVERGENCES.txt [MINIMIZED_DIR] OUT_DIR

DIVERGENCES.txt: replay's or diff's FAIL lines ("FAIL name [family]: what").
MINIMIZED_DIR: kept/*.kcase from `kernel_record.sh minimize` (their //d lines are the cause).
"""
import os
import re
import sys


def minimized_cause(path):
    """The instructions a minimized case kept (the lines the minimizer may drop: //d)."""
    ops = []
    with open(path) as f:
        for line in f:
            if line.rstrip().endswith("//d"):
                ops.append(re.sub(r"\s+", " ", line.split("//d")[0].strip()))
    return "; ".join(ops)


def main(rec, divs, mini, out):
    why = {}
    with open(divs) as f:
        for line in f:
            m = re.match(r"(?:FAIL )?(\S+) \[(\w+)\]: (.*)", line.strip())
            if m:
                why[m.group(1)] = m.group(3)
    if mini and os.path.isdir(mini):
        for name in os.listdir(mini):
            case = name[:-len(".kcase")]
            if case in why:
                cause = minimized_cause(os.path.join(mini, name))
                if cause:
                    why[case] += "; minimized to: " + cause
    os.makedirs(out, exist_ok=True)
    opened = kept = 0
    for name in sorted(os.listdir(rec)):
        if not name.endswith(".kcase"):
            continue
        with open(os.path.join(rec, name)) as f:
            lines = f.read().split("\n")
        case = None
        for i, line in enumerate(lines):
            if line.startswith("case "):
                case = line[5:].strip()
            elif line.startswith("status ") and case is not None:
                if case in why:
                    lines[i] = "status open: the H200 wrote other bytes: " + why[case]
                    opened += 1
                else:
                    kept += 1
        with open(os.path.join(out, name), "w") as f:
            f.write("\n".join(lines))
    print(f"kcase_status: {kept} recorded, {opened} open")
    return 0


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    a = sys.argv[1:]
    sys.exit(main(a[0], a[1], a[2] if len(a) == 4 else None, a[-1]))
