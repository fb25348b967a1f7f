#!/usr/bin/env python3
"""Link sharing, hetsim against SimGrid 3.32 on a dumbbell (issue 12).

    python3 bench/dumbbell.py

Runs examples/dumbbell/app.rhai on examples/dumbbell/system.toml, and on the same system with
access links 10 times the bottleneck instead of 100, and the same platform and flows in
SimGrid (bench/peers/simgrid.cpp, scenario dumbbell) under its plain max-min model (CM02,
no cross traffic) and its default (LV08). Prints each flow's arrival time [ms] as a Markdown
table for docs/SIMULATION.md. Needs what bench/compare.py needs.
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import HETSIM, ROOT, build  # noqa: E402

FLOWS = ["S2->R1", "S2->R2", "S1->R1"]
CM02 = ["--cfg=network/model:CM02", "--cfg=network/crosstraffic:0"]


def arrivals(output, pattern):
    """Arrival time [ms] of each flow, by its name in FLOWS."""
    found = {m.group(1).upper(): float(m.group(2)) * 1e3 for m in re.finditer(pattern, output)}
    missing = [f for f in FLOWS if f not in found]
    if missing:
        sys.exit(f"no arrival for {missing} in:\n{output}")
    return [found[f] for f in FLOWS]


def hetsim(system):
    out = subprocess.run([HETSIM, "run", "--app", "examples/dumbbell/app.rhai", "--system", system],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return arrivals(out, r"flow (\S+) \S+ B arrived ([0-9.e-]+)")


def simgrid(binary, access, config):
    out = subprocess.run([binary, "dumbbell", access, "--log=root.thres:critical"] + config,
                         capture_output=True, text=True, check=True).stdout
    return arrivals(out, r"flow (\S+) \S+ B arrived ([0-9.]+)")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        binary = build(tmp)
        fast = os.path.join(ROOT, "examples/dumbbell/system.toml")
        slow = os.path.join(tmp, "access10.toml")
        with open(fast) as src, open(slow, "w") as dst:
            dst.write(src.read().replace("bandwidth = 12.5e9", "bandwidth = 1.25e9"))
        rows = []
        for name, system, access in [("100x", fast, "12.5GBps"), ("10x", slow, "1.25GBps")]:
            h = hetsim(system)
            plain = simgrid(binary, access, CM02)
            default = simgrid(binary, access, [])
            rows.append((name, h, plain, default))
    print("| access links | flow | hetsim [ms] | SimGrid CM02 [ms] | difference | SimGrid LV08 [ms] |")
    print("|---|---|---|---|---|---|")
    for name, h, plain, default in rows:
        for flow, a, b, c in zip(FLOWS, h, plain, default):
            print(f"| {name} | {flow} | {a:.3f} | {b:.3f} | {100 * (a - b) / b:+.2f} % | {c:.3f} |")


if __name__ == "__main__":
    main()
