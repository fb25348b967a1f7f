#!/usr/bin/env python3
"""nccl-tests on the simulator: sweeps all_reduce, all_gather, reduce_scatter and alltoall
from 8 B to 16 GiB through `target/release/hetsim run` (examples/nccl/app.rhai) and prints
nccl-tests-like tables (size, time, algbw, busbw) with the error against measured rows where
a measurement file has the same collective, GPU count and size.

    python3 bench/nccl.py [--system examples/clusters/hgx-h100.toml] [--gpus 8] [--boards 1]
        [--collectives all_reduce,all_gather] [--min 8] [--max 17179869184]
        [--measured ../shared/measurements/nccl/h100-8gpu-all_reduce.csv ...]
        [--algorithm nvls --protocol Simple] [--collnet] [--min-ctas 24]

busbw is nccl-tests' (src/*.cu, `getBw`): algbw x 2(n-1)/n for all_reduce, x (n-1)/n for
all_gather, reduce_scatter and alltoall. The MAPE lines are split at 1 MiB as the targets of
issue 48 are. With --boards B (a cluster file such as examples/clusters/h100-ib.toml), the
run variable `boards` is B, the GPUs 8 B unless --gpus says otherwise, and measured rows are
those of B nodes. --collnet runs a copy of the system file with `collnet = true` (NCCL's
CollNet enabled, docs/SIMULATION.md), --min-ctas N one with `nccl_min_ctas = N` (as
NCCL_MIN_CTAS=N), from a temporary file beside it.
"""

import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
APP_NAMES = {
    "all_reduce": "allreduce",
    "all_gather": "allgather",
    "reduce_scatter": "reducescatter",
    "alltoall": "alltoall",
}
LINE = re.compile(r"GPU\[(\d+)\]: size ([0-9.e+]+) time ([0-9.e+-]+)")


def bus_factor(collective, n):
    return 2.0 * (n - 1) / n if collective == "all_reduce" else (n - 1) / n


def simulate(args, collective):
    """{size: seconds}: the slowest GPU's time per size."""
    command = [
        args.hetsim, "run", "--app", os.path.join(ROOT, "examples/nccl/app.rhai"),
        "--system", args.system, "--label", f"GPU={args.gpus}", "--algorithm", "nccl",
        "--var", f"collective={APP_NAMES[collective]}",
        "--var", f"minBytes={float(args.min)}", "--var", f"maxBytes={float(args.max)}",
    ]
    if args.boards > 1:
        command += ["--var", f"boards={args.boards}"]
    for name in ("algorithm", "protocol"):
        if getattr(args, name):
            command += ["--var", f"{name}={getattr(args, name)}"]
    out = subprocess.run(command, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{out.stderr}")
    times = {}
    for match in LINE.finditer(out.stdout + out.stderr):
        size, t = int(float(match.group(2))), float(match.group(3))
        times[size] = max(times.get(size, 0.0), t)
    return times


def measured(paths):
    rows = {}
    for path in paths:
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                key = (r["collective"], int(r["gpus"]), int(r["nodes"]), int(r["size_bytes"]))
                rows[key] = float(r["time_us"])
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--system", default=os.path.join(ROOT, "examples/clusters/hgx-h100.toml"))
    p.add_argument("--gpus", type=int)
    p.add_argument("--boards", type=int, default=1)
    p.add_argument("--collectives", default="all_reduce,all_gather,reduce_scatter,alltoall")
    p.add_argument("--min", type=int, default=8)
    p.add_argument("--max", type=int, default=17179869184)
    p.add_argument("--algorithm")
    p.add_argument("--protocol")
    p.add_argument("--measured", nargs="*", default=[
        os.path.join(ROOT, "../shared/measurements/nccl/h100-8gpu-all_reduce.csv")])
    p.add_argument("--hetsim", default=os.path.join(ROOT, "target/release/hetsim"))
    p.add_argument("--collnet", action="store_true", help="enable NCCL's CollNet (SHARP)")
    p.add_argument("--min-ctas", type=int, help="NCCL_MIN_CTAS of the run")
    args = p.parse_args()
    settings = (["collnet = true"] if args.collnet else []) + (
        [f"nccl_min_ctas = {args.min_ctas}"] if args.min_ctas else [])
    args.shown = os.path.relpath(args.system, ROOT) + "".join(f" with {s}" for s in settings)
    if settings:
        # Beside the original, so that paths the file names relative to itself still resolve.
        with open(args.system) as f:
            text = f.read()
        copy = tempfile.NamedTemporaryFile(
            "w", suffix=".toml", dir=os.path.dirname(os.path.abspath(args.system)), delete=False)
        with copy:
            copy.write("".join(s + "\n" for s in settings) + text)
        args.system = copy.name
        try:
            run(args)
        finally:
            os.unlink(copy.name)
        return
    run(args)


def run(args):
    args.gpus = args.gpus or 8 * args.boards
    reference = measured([m for m in args.measured if os.path.exists(m)])
    for collective in args.collectives.split(","):
        times = simulate(args, collective)
        print(f"\n# {collective}, {args.gpus} GPUs, {args.shown}")
        print(f"{'size (B)':>14} {'time (us)':>11} {'algbw (GB/s)':>13} {'busbw (GB/s)':>13}"
              f" {'measured (us)':>14} {'error':>8}")
        errors = {"small": [], "large": []}
        for size in sorted(times):
            us = times[size] * 1e6
            algbw = size / times[size] / 1e9 if times[size] > 0 else 0.0
            busbw = algbw * bus_factor(collective, args.gpus)
            meas = reference.get((collective, args.gpus, args.boards, size))
            tail = ""
            if meas:
                err = (us - meas) / meas
                errors["large" if size >= 1 << 20 else "small"].append(abs(err))
                tail = f" {meas:>14.2f} {100 * err:>7.1f}%"
            print(f"{size:>14} {us:>11.2f} {algbw:>13.2f} {busbw:>13.2f}{tail}")
        for part, label in (("small", "< 1 MiB"), ("large", ">= 1 MiB")):
            if errors[part]:
                mape = 100 * sum(errors[part]) / len(errors[part])
                print(f"MAPE {label}: {mape:.1f} % over {len(errors[part])} sizes")


if __name__ == "__main__":
    main()
