#!/usr/bin/env python3
"""Chakra traces replayed by hetsim and by ASTRA-sim's analytical backend, side by side
(issue 44's peer comparison, docs/TRACES.md "Against ASTRA-sim").

    python3 bench/replay.py --astra-bin DIR [--astra-src DIR] [--chakra-git DIR]
        [--hetsim PATH] [--bandwidth 450e9] [--latency 500e-9] [--runs 3]

DIR holds AstraSim_Analytical_Congestion_Unaware and _Aware (/work/shared/tools/setup-astra
builds them; env ASTRA_BIN); the ASTRA-sim source tree defaults to the one they were built
in (DIR/../../../..; env ASTRA_SRC) and gives the traces: its microbenchmarks
(examples/workload/microbenchmarks/{all_reduce,all_gather,reduce_scatter,all_to_all}/
{4,8,16}npus_1MB) and its custom ring all-reduce (examples/system/custom_collectives/
custom_ring_allreduce_8npus_1MB, replayed by both as a workload). --chakra-git, a git
directory of astra-sim/chakra (env CHAKRA_GIT), adds its tests/data/feeder_tests_trace.tar.gz.
The traces are read where they are (or extracted to a temporary folder), never copied here.

Both simulators get the same system, written into a temporary folder: N NPUs on one switch,
each wired to it by a link of --bandwidth bytes/s and --latency seconds (ASTRA-sim's GB is
2^30 bytes, so its `bandwidth` is --bandwidth / 2^30; its latency is per hop, a switch route
having two hops as hetsim's route crosses two links; hetsim's switch adds no latency).
Collectives are rings on both (hetsim `--algorithm ring`; ASTRA-sim `ring`, all-to-all
`direct1`, one peer at a time as hetsim's pairwise exchange), in one chunk
(`preferred-dataset-splits` 1), with ASTRA-sim's reduction memory time made negligible
(`local-mem-bw` 10^6 GB/s) and its smallest endpoint delay (1 ns; 0 trips its event queue's
assertion). GPU compute keeps its recorded time (hetsim `--compute replay`; ASTRA-sim
without roofline). Prints a Markdown table: per trace the ranks, each simulator's simulated
time (the last rank to finish), hetsim / ASTRA-sim, the nodes each ran of those in the
files, and each one's median wall time over --runs runs.
"""
import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLLECTIVES = ["all_reduce", "all_gather", "reduce_scatter", "all_to_all"]
BACKENDS = ["Unaware", "Aware"]
FINISHED = re.compile(r"sys\[(\d+)\] finished, (\d+) cycles")
ISSUED = re.compile(r"issue,sys->id=(\d+),")


def default_hetsim():
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    return os.environ.get("HETSIM", os.path.join(target, "release", "hetsim"))


def hetsim_system(npus, bandwidth, latency):
    """N GPUs on one switch, each by a link of `bandwidth` B/s and `latency` s."""
    lines = [
        f'name = "replay-bench-switch-{npus}"',
        "",
        "[[component]]",
        'name = "Bench switch"',
        'kind = "SWITCH"',
        'source = "bench/replay.py: ASTRA-sim\'s analytical switch adds no delay of its own"',
        "attributes = { latency = 0.0 }",
        "",
        "[[component]]",
        'name = "Bench link"',
        'kind = "NETWORK"',
        'source = "bench/replay.py: the link ASTRA-sim is given"',
        f"attributes = {{ bandwidth = {bandwidth!r}, startup = {latency!r}, lambda = 1.0 }}",
        "",
        "[[node]]",
        'id = "switch"',
        'component = "Bench switch"',
    ]
    for i in range(npus):
        lines += ["", "[[node]]", f'id = "gpu{i}"', 'component = "H100 SXM5 80GB"', 'model = "gpu-volkov"',
                  "labels = { GPU = 1 }"]
    for i in range(npus):
        lines += ["", "[[link]]", f'between = ["gpu{i}", "switch"]', 'component = "Bench link"']
    return "\n".join(lines) + "\n"


def astra_network(npus, bandwidth, latency):
    return (f"topology: [ Switch ]\nnpus_count: [ {npus} ]\n"
            f"bandwidth: [ {bandwidth / 2**30!r} ]  # GB/s, GB = 2^30 B\n"
            f"latency: [ {latency * 1e9!r} ]  # ns per hop\n")


ASTRA_SYSTEM = {
    "scheduling-policy": "FIFO",
    "endpoint-delay": 1,
    "active-chunks-per-dimension": 1,
    "preferred-dataset-splits": 1,
    "all-reduce-implementation": ["ring"],
    "all-gather-implementation": ["ring"],
    "reduce-scatter-implementation": ["ring"],
    "all-to-all-implementation": ["direct1"],
    "collective-optimization": "baseline",
    "local-mem-bw": 1000000,
    "boost-mode": 0,
    "roofline-enabled": 0,
    "trace-enabled": 1,
}


def timed(cmd, cwd):
    """(wall seconds, stdout + stderr, exit status) of one run of cmd."""
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, check=False)
    return time.perf_counter() - start, out.stdout + out.stderr, out.returncode


def run_hetsim(args, prefix, system, extra=()):
    cmd = [args.hetsim, "replay", prefix, "--system", system, "--algorithm", "ring", "--json", *extra]
    walls = []
    for _ in range(args.runs):
        wall, out, status = timed(cmd, ROOT)
        if status != 0:
            sys.exit(f"failed ({status}): {' '.join(cmd)}\n{out}")
        walls.append(wall)
    report = json.loads(out)
    ranks = report["ranks"]
    return {
        "time": max(r["finish_time"] for r in ranks),
        "ran": sum(r["ran"] for r in ranks),
        "nodes": sum(r["nodes"] for r in ranks),
        "wall": statistics.median(walls),
    }


def run_astra(args, backend, prefix, folder, npus, tmp):
    """Simulated time [s] of the last rank to finish, the nodes issued, and the wall time;
    or the reason it failed."""
    binary = os.path.join(args.astra_bin, f"AstraSim_Analytical_Congestion_{backend}")
    network = os.path.join(folder, f"net{npus}.yml")
    system = os.path.join(tmp, "astra-system.json")
    logs = os.path.join(folder, f"log-{backend}")
    cmd = [binary, f"--workload-configuration={prefix}", f"--system-configuration={system}",
           "--remote-memory-configuration=" + os.path.join(args.astra_src,
                                                           "examples/remote_memory/analytical/no_memory_expansion.json"),
           f"--network-configuration={network}", f"--logging-folder={logs}"]
    walls = []
    for _ in range(args.runs):
        subprocess.run(["rm", "-rf", logs], check=True)
        wall, out, status = timed(cmd, folder)
        walls.append(wall)
        if status != 0:
            reason = [line for line in out.splitlines() if "what()" in line or "Error" in line or "Assert" in line]
            return {"error": (reason or out.splitlines()[-1:] or [f"exit {status}"])[-1].strip()}
    finished = {int(m.group(1)): int(m.group(2)) for m in FINISHED.finditer(out)}
    issued = 0
    for log in glob.glob(os.path.join(logs, "log.log*")):
        with open(log) as f:
            issued += sum(1 for line in f if ISSUED.search(line))
    return {
        "time": max(finished.values(), default=0) * 1e-9,
        "finished": len(finished),
        "ran": issued,
        "wall": statistics.median(walls),
    }


def chakra_trace(args, tmp):
    """Chakra's PyTorch test trace (one rank) as a prefix of two ranks, the same file twice:
    ASTRA-sim's analytical network needs npus_count > 1; hetsim replays rank 0 alone. None
    without --chakra-git."""
    if not args.chakra_git:
        return None
    blob = subprocess.run(["git", f"--git-dir={args.chakra_git}", "show", "HEAD:tests/data/feeder_tests_trace.tar.gz"],
                          capture_output=True, check=False)
    if blob.returncode != 0:
        print(f"(no feeder_tests_trace.tar.gz in {args.chakra_git}: skipped)", file=sys.stderr)
        return None
    archive = os.path.join(tmp, "feeder_tests_trace.tar.gz")
    with open(archive, "wb") as f:
        f.write(blob.stdout)
    folder = os.path.join(tmp, "chakra")
    os.makedirs(folder)
    with tarfile.open(archive) as tar:
        member = tar.getmember("tests/data/chakra.0.et")
        with tar.extractfile(member) as src, open(os.path.join(folder, "chakra.0.et"), "wb") as dst:
            dst.write(src.read())
    os.symlink("chakra.0.et", os.path.join(folder, "chakra.1.et"))
    return os.path.join(folder, "chakra")


def cases(args, tmp):
    """(name, hetsim's trace, its ranks, ASTRA-sim's prefix, its ranks, hetsim's extra flags)."""
    micro = os.path.join(args.astra_src, "examples/workload/microbenchmarks")
    for collective in COLLECTIVES:
        for npus in (4, 8, 16):
            prefix = os.path.join(micro, collective, f"{npus}npus_1MB", collective)
            if os.path.exists(prefix + ".0.et"):
                yield f"{collective} {npus}npus_1MB", prefix, npus, prefix, npus, ()
    custom = os.path.join(args.astra_src,
                          "examples/system/custom_collectives/custom_ring_allreduce_8npus_1MB/custom_allreduce")
    if os.path.exists(custom + ".0.et"):
        yield "custom_ring_allreduce_8npus_1MB", custom, 8, custom, 8, ()
    chakra = chakra_trace(args, tmp)
    if chakra:
        yield "Chakra feeder_tests_trace", chakra + ".0.et", 1, chakra, 2, ()
        yield "same, hetsim `--data-deps-only`", chakra + ".0.et", 1, None, 2, ("--data-deps-only",)


def us(seconds):
    return f"{seconds * 1e6:,.3f} µs" if seconds < 1e-2 else f"{seconds * 1e3:,.3f} ms"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--astra-bin", default=os.environ.get("ASTRA_BIN"))
    p.add_argument("--astra-src", default=os.environ.get("ASTRA_SRC"))
    p.add_argument("--chakra-git", default=os.environ.get("CHAKRA_GIT"))
    p.add_argument("--hetsim", default=default_hetsim())
    p.add_argument("--bandwidth", type=float, default=450e9, help="bytes/s of every link")
    p.add_argument("--latency", type=float, default=500e-9, help="seconds of every link")
    p.add_argument("--runs", type=int, default=3, help="runs per simulator and trace (median wall time)")
    args = p.parse_args()
    if not args.astra_bin:
        sys.exit("--astra-bin (or ASTRA_BIN): the folder of ASTRA-sim's analytical binaries")
    args.astra_src = args.astra_src or os.path.abspath(os.path.join(args.astra_bin, "../../../.."))
    for path in (args.hetsim, args.astra_bin, args.astra_src):
        if not os.path.exists(path):
            sys.exit(f"not found: {path}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "astra-system.json"), "w") as f:
            json.dump(ASTRA_SYSTEM, f, indent=1)
        for name, trace, npus, prefix, astra_npus, extra in cases(args, tmp):
            folder = tempfile.mkdtemp(dir=tmp)
            system = os.path.join(folder, "system.toml")
            with open(system, "w") as f:
                f.write(hetsim_system(npus, args.bandwidth, args.latency))
            with open(os.path.join(folder, f"net{astra_npus}.yml"), "w") as f:
                f.write(astra_network(astra_npus, args.bandwidth, args.latency))
            h = run_hetsim(args, trace, system, extra)
            astra = {b: run_astra(args, b, prefix, folder, astra_npus, tmp) for b in BACKENDS} if prefix else {}
            rows.append((name, npus, h, astra))
            print(f"{name}: done", file=sys.stderr)
    print(f"Switch of N NPUs, links {args.bandwidth / 1e9:g} GB/s and {args.latency * 1e9:g} ns; rings; "
          f"wall times median of {args.runs}.\n")
    print("| trace | ranks | hetsim | ASTRA-sim unaware | hetsim / unaware | ASTRA-sim aware | nodes run: hetsim"
          " / ASTRA-sim unaware / in files | wall: hetsim / unaware |")
    print("|---|---|---|---|---|---|---|---|")
    for name, npus, h, astra in rows:
        un, aw = astra.get("Unaware", {}), astra.get("Aware", {})
        if "time" in un:
            cells = [us(un["time"]), f"{h['time'] / un['time']:.4f}", us(aw["time"]) if "time" in aw else
                     aw.get("error", ""), f"{h['ran']:,} / {un['ran']:,} / {h['nodes']:,}",
                     f"{h['wall']:.3f} s / {un['wall']:.3f} s"]
        else:
            reason = f"fails: {un['error']}" if "error" in un else "not run"
            cells = [reason, "", "", f"{h['ran']:,} / – / {h['nodes']:,}", f"{h['wall']:.3f} s / –"]
        print(f"| {name} | {npus} | {us(h['time'])} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
