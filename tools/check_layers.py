#!/usr/bin/env python3
"""Fails on an #include that runs up the emulator's layers (emu/<room>/...).

Rooms, bottom-up: platform < core < memory < ipc | vmm | external < module | inspect < exec < graph < runtime < nvml <
abi | hosting (NVIDIA's private tables are an export surface, as abi's symbols are). A room includes its own headers and those of rooms below it. Every room
may include the error machinery (core/errc.hpp) and the entry prototypes the .def tables
generate (abi/driver_api.hpp, abi/runtime_api.hpp): each room implements entries.

The includes that still run up are listed in KNOWN, each with what would remove it; the check
also fails when one of them is gone, so that the list only shrinks.
  tools/check_layers.py [REPO]
"""
import os
import re
import sys

RANK = {"platform": 0, "core": 1, "memory": 2, "ipc": 3, "vmm": 3, "external": 3, "module": 4, "inspect": 4,
        "exec": 5, "graph": 6, "runtime": 7, "nvml": 8, "abi": 9, "hosting": 9}
ANYWHERE = {"core/errc.hpp", "abi/driver_api.hpp", "abi/runtime_api.hpp"}

# (including file, included header): why it is there / what would remove it.
KNOWN = {
}

INCLUDE = re.compile(r'\s*#\s*include\s+"(([a-z_]+)/[^"]+)"')


def main(repo):
    emu = os.path.join(repo, "emu")
    found, bad = set(), []
    for room in sorted(RANK):
        d = os.path.join(emu, room)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if not name.endswith((".cpp", ".hpp", ".h", ".def", ".inc")):
                continue
            rel = f"{room}/{name}"
            with open(os.path.join(d, name), encoding="utf-8", errors="replace") as f:
                for n, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m or m.group(2) not in RANK or m.group(2) == room or m.group(1) in ANYWHERE:
                        continue
                    if RANK[m.group(2)] <= RANK[room]:
                        continue
                    if (rel, m.group(1)) in KNOWN:
                        found.add((rel, m.group(1)))
                    else:
                        bad.append(f"emu/{rel}:{n}: includes {m.group(1)}, a room above {room}/ "
                                   f"(order: platform < core < memory < ipc|vmm|external < module|inspect < exec < runtime "
                                   f"< nvml < abi|hosting); pass what it needs down through a hook instead")
    for k in sorted(set(KNOWN) - found):
        bad.append(f"tools/check_layers.py: emu/{k[0]} no longer includes {k[1]}: remove it from KNOWN")
    for b in bad:
        print(b)
    print(f"check_layers: {len(found)} known upward includes left, {len(bad)} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")))
