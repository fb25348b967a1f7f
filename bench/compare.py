#!/usr/bin/env python3
"""hetsim against its peers, same machine, same run (issue 3 benchmarks).

    python3 bench/compare.py [--runs 3] [--quick] [--baseline PATH/TO/OLD/hetsim]

Builds hetsim (release) and the SimGrid peer (needs Debian's libsimgrid-dev 3.32 and g++),
uses SimPy 4.1.2 (pip), then times, as whole processes, the median of --runs runs:
  ping-pong: 2 processes, 100,000 round trips of 1000-byte messages over one link
             (hetsim scripted in Rhai; SimGrid S4U C++; SimPy);
  master-worker: 1 master, W workers each on its own node, 10 rounds of one task per worker
             (hetsim scripted in Rhai, W = 10,000, against SimGrid; W = 1,000,000 scripted, from
             examples/master-worker/million.toml, as SimGrid is not run at that size).
With --baseline, another hetsim binary (an earlier build) runs the same scripted workloads in
the same run, before this one, so that a change is measured before and after on one machine (a
build from before `internal` links, 2026-11-27, cannot read the million-worker system).
Prints a Markdown table with wall times, peak memory and the ratios, for docs/PERFORMANCE.md.
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HETSIM = os.path.join(ROOT, "target", "release", "hetsim")


def measure(cmd):
    """(wall seconds, peak RSS MiB) of one run of cmd, which must succeed."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    stderr = proc.stderr.read().decode()
    if status != 0:
        sys.exit(f"failed ({status}): {' '.join(cmd)}\n{stderr}")
    return wall, usage.ru_maxrss / 1024


def median(cmd, runs):
    samples = [measure(cmd) for _ in range(runs)]
    return statistics.median(s[0] for s in samples), max(s[1] for s in samples)


def build(tmp):
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "hetsim"], cwd=ROOT, check=True)
    simgrid = os.path.join(tmp, "simgrid")
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "simgrid"], capture_output=True, text=True,
                           check=True).stdout.split()
    subprocess.run(["g++", "-O2", "-std=c++17", "-o", simgrid, os.path.join(ROOT, "bench/peers/simgrid.cpp")] + flags,
                   check=True)
    return simgrid


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke test")
    parser.add_argument("--baseline", help="an earlier hetsim binary to time beside this one")
    args = parser.parse_args()
    trips = 10_000 if args.quick else 100_000
    workers = 1_000 if args.quick else 10_000
    big = 10_000 if args.quick else 1_000_000
    sg_log = "--log=root.thres:critical"
    with tempfile.TemporaryDirectory() as tmp:
        simgrid = build(tmp)
        system = os.path.join(tmp, f"mw{workers}.toml")
        with open(system, "w") as f:
            subprocess.run([sys.executable, os.path.join(ROOT, "examples/master-worker/generate.py"), str(workers)],
                           stdout=f, check=True)
        rows = []
        pingpong = ["run", "--app", "bench/pingpong/app.rhai", "--system", "bench/pingpong/system.toml",
                    "--var", f"roundTrips={trips}"]
        if args.baseline:
            rows.append((f"ping-pong, {trips:,} round trips", "hetsim baseline",
                         median([args.baseline] + pingpong, args.runs), None))
        pp_h = median([HETSIM] + pingpong, args.runs)
        pp_s = median([simgrid, "pingpong", str(trips), sg_log], args.runs)
        pp_p = median([sys.executable, "bench/peers/simpy_pingpong.py", str(trips)], args.runs)
        rows.append((f"ping-pong, {trips:,} round trips", "hetsim (scripted)", pp_h, None))
        rows.append(("", "SimGrid 3.32 (S4U C++)", pp_s, pp_h[0] / pp_s[0]))
        rows.append(("", "SimPy 4.1.2", pp_p, pp_h[0] / pp_p[0]))
        if args.baseline:
            rows.append((f"master-worker W={workers:,}, 10 rounds", "hetsim baseline",
                         median([args.baseline, "run", "--app", "examples/master-worker/app.rhai", "--system", system],
                                args.runs), None))
        mw_h = median([HETSIM, "run", "--app", "examples/master-worker/app.rhai", "--system", system], args.runs)
        mw_s = median([simgrid, "masterworker", str(workers), "10", sg_log], args.runs)
        rows.append((f"master-worker W={workers:,}, 10 rounds", "hetsim (scripted)", mw_h, None))
        rows.append(("", "SimGrid 3.32 (S4U C++)", mw_s, mw_h[0] / mw_s[0]))
        big_system = "examples/master-worker/million.toml"
        if args.quick:
            big_system = os.path.join(tmp, "big.toml")
            with open("examples/master-worker/million.toml") as src, open(big_system, "w") as dst:
                dst.write(src.read().replace("count = 1000000", f"count = {big}"))
        if args.baseline:
            rows.append((f"master-worker W={big:,}, 10 rounds", "hetsim baseline",
                         median([args.baseline, "run", "--app", "examples/master-worker/app.rhai", "--system",
                                 big_system], 1), None))
        mw_big = median([HETSIM, "run", "--app", "examples/master-worker/app.rhai", "--system", big_system], 1)
        rows.append((f"master-worker W={big:,}, 10 rounds", "hetsim (scripted)", mw_big, None))
    print("| workload | simulator | wall [s] (median) | peak RSS [MiB] | hetsim / peer |")
    print("|---|---|---|---|---|")
    for workload, sim, (wall, rss), ratio in rows:
        r = f"{ratio:.3f} ({1 / ratio:.1f}x faster)" if ratio else ""
        print(f"| {workload} | {sim} | {wall:.3f} | {rss:.0f} | {r} |")


if __name__ == "__main__":
    main()
