#!/usr/bin/env python3
"""What NVIDIA's runtime asks of the driver's private tables, on cuda-shim and on NVIDIA's driver.

  dark_api_traffic.py normalize RECORDING > EXPECTED
      the tables asked for (id, size) and the slots called (id, index) in a recording made by
      tools/probe/record_dark_api.cpp, one per line, sorted: what tests/nvcc/data keeps.
  dark_api_traffic.py check RECORDER EXPECTED COMMAND...
      runs COMMAND (a program on cuda-shim, through the launcher) with the recorder preloaded
      and fails unless it asks for the same tables, of the same sizes, and calls the same slots
      as NVIDIA's runtime did on NVIDIA's driver 580 (EXPECTED).
"""
import os
import re
import subprocess
import sys
import tempfile

NO_SIZE = "c693336e"  # context-local storage: its first word is a slot, not a size


def normalize(path):
    lines = set()
    with open(path) as f:
        for line in f:
            m = re.match(r"table (\S+ \S+ \S+ \S+) -> 0(?: size (\d+))?", line)
            if m:
                size = "-" if m.group(1).startswith(NO_SIZE) or m.group(2) is None else m.group(2)
                lines.add(f"table {m.group(1)} size {size}")
                continue
            m = re.match(r"slot (\S+ \S+ \S+ \S+) \[(\d+)\]", line)
            if m:
                lines.add(f"slot {m.group(1)} [{m.group(2)}]")
    return sorted(lines)


def expected(path):
    with open(path) as f:
        return sorted(l.strip() for l in f if l.strip() and not l.startswith("#"))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "normalize":
        print("\n".join(normalize(sys.argv[2])))
        return 0
    if len(sys.argv) < 5 or sys.argv[1] != "check":
        print(__doc__, file=sys.stderr)
        return 2
    recorder, want_path, cmd = sys.argv[2], sys.argv[3], sys.argv[4:]
    with tempfile.TemporaryDirectory() as tmp:
        rec = os.path.join(tmp, "recording.txt")
        env = dict(os.environ, RECORD_DARK_API=rec, LD_PRELOAD=recorder)
        run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        sys.stdout.write(run.stdout)
        sys.stderr.write(run.stderr)
        if run.returncode != 0:
            print(f"dark_api_traffic: the program failed ({run.returncode})", file=sys.stderr)
            return 1
        got = normalize(rec) if os.path.exists(rec) else []
    want = expected(want_path)
    if got == want:
        print(f"dark_api_traffic: PASS ({len(got)} tables and slots, as on NVIDIA's driver)")
        return 0
    for line in sorted(set(want) - set(got)):
        print(f"  only on NVIDIA's driver: {line}", file=sys.stderr)
    for line in sorted(set(got) - set(want)):
        print(f"  only on cuda-shim:      {line}", file=sys.stderr)
    print("dark_api_traffic: FAIL: NVIDIA's runtime asks cuda-shim for other tables or slots", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
