#!/usr/bin/env python3
"""Chakra traces replayed by hetsim and by ASTRA-sim's analytical backend, side by side
(issue 44's peer comparison, docs/TRACES.md "Against ASTRA-sim").

    python3 bench/replay.py --astra-bin DIR [--astra-src DIR] [--chakra-git DIR]
        [--hetsim PATH] [--bandwidth 450e9] [--latency 500e-9] [--runs 3] [--trace PREFIX]

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

--trace PREFIX replays one given trace instead (PREFIX.0.et ... PREFIX.{N-1}.et, N ranks on the
switch of N NPUs; e.g. the 10^6-node one `cargo bench -p hetsim-replay --bench replay -- 64
--keep DIR` leaves as DIR/train) by hetsim and ASTRA-sim's congestion-unaware backend, --runs
times each, alternating (hetsim, ASTRA-sim, hetsim, ...), and prints each one's simulated
time, nodes run, wall times (median and every run), peak RSS (the child's ru_maxrss from
wait4) and the wall ratio hetsim / ASTRA-sim. The timed ASTRA-sim runs log no per-node trace
(`trace-enabled` 0); one more, untimed for the median, logs it (`trace-enabled` 1) to count
the nodes it issued.
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
ISSUED_NODE = re.compile(r"issue,sys->id=(\d+), tick=\d+, node->id=(\d+),")


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


def measured(cmd, cwd):
    """(wall seconds, peak RSS [KiB], CPU seconds (user + system), stdout, stderr, exit
    status) of one run of cmd; the peak RSS and CPU time are the child's own, from wait4."""
    with tempfile.TemporaryFile(mode="w+") as out, tempfile.TemporaryFile(mode="w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        cpu = usage.ru_utime + usage.ru_stime
        return wall, usage.ru_maxrss, cpu, out.read(), err.read(), proc.returncode


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


def trace_ranks(prefix):
    """N where PREFIX.0.et ... PREFIX.{N-1}.et exist."""
    n = 0
    while os.path.exists(f"{prefix}.{n}.et"):
        n += 1
    return n


def astra_issued(logs):
    """(issue lines in ASTRA-sim's logs, each rank's highest node id issued, how many log
    files): its log rotates at 10 files of 10 MiB, so when all 11 are there the oldest lines
    are gone, the newest (each rank's last nodes) kept."""
    files = glob.glob(os.path.join(logs, "log*.log"))
    issued, last = 0, {}
    for log in files:
        with open(log) as f:
            for line in f:
                m = ISSUED_NODE.search(line)
                if m:
                    rank, node = int(m.group(1)), int(m.group(2))
                    issued += 1
                    last[rank] = max(last.get(rank, node), node)
    return issued, last, len(files)


def compare_trace(args, tmp):
    """--trace: hetsim and ASTRA-sim (congestion-unaware) on one trace, alternating."""
    if args.runs < 1:
        sys.exit("--runs: 1 at least")
    prefix = os.path.abspath(args.trace)
    npus = trace_ranks(prefix)
    if npus < 2:
        sys.exit(f"{prefix}.0.et and .1.et at least: ASTRA-sim's analytical network needs npus_count > 1")
    files = [f"{prefix}.{r}.et" for r in range(npus)]
    for path in files:  # read once so that neither simulator's first run pays for the disk
        with open(path, "rb") as f:
            while f.read(1 << 24):
                pass
    system = os.path.join(tmp, "system.toml")
    with open(system, "w") as f:
        f.write(hetsim_system(npus, args.bandwidth, args.latency))
    network = os.path.join(tmp, f"net{npus}.yml")
    with open(network, "w") as f:
        f.write(astra_network(npus, args.bandwidth, args.latency))
    astra_systems = {}
    for trace in (0, 1):
        astra_systems[trace] = os.path.join(tmp, f"astra-system-trace{trace}.json")
        with open(astra_systems[trace], "w") as f:
            json.dump({**ASTRA_SYSTEM, "trace-enabled": trace}, f, indent=1)
    hetsim_cmd = [args.hetsim, "replay", prefix, "--system", system, "--algorithm", "ring", "--json"]
    logs = os.path.join(tmp, "astra-logs")

    def astra_cmd(trace):
        binary = os.path.join(args.astra_bin, "AstraSim_Analytical_Congestion_Unaware")
        memory = os.path.join(args.astra_src, "examples/remote_memory/analytical/no_memory_expansion.json")
        return [binary, f"--workload-configuration={prefix}", f"--system-configuration={astra_systems[trace]}",
                f"--remote-memory-configuration={memory}", f"--network-configuration={network}",
                f"--logging-folder={logs}"]

    def astra_run(trace):
        subprocess.run(["rm", "-rf", logs], check=True)
        wall, rss, cpu, out, err, status = measured(astra_cmd(trace), tmp)
        if status != 0:
            lines = (out + err).splitlines()
            reason = [line for line in lines if "what()" in line or "Error" in line or "Assert" in line]
            sys.exit(f"ASTRA-sim failed ({status}): {' '.join(astra_cmd(trace))}\n"
                     + "\n".join(reason or lines[-20:]))
        finished = {int(m.group(1)): int(m.group(2)) for m in FINISHED.finditer(out + err)}
        return wall, rss, cpu, finished

    h_runs, a_runs = [], []
    h_report = a_finished = None
    for i in range(args.runs):
        wall, rss, cpu, out, err, status = measured(hetsim_cmd, ROOT)
        if status != 0:
            sys.exit(f"hetsim failed ({status}): {' '.join(hetsim_cmd)}\n{err}")
        h_report = json.loads(out)
        h_runs.append((wall, rss, cpu))
        print(f"run {i + 1}: hetsim {wall:.2f} s ({cpu:.2f} s CPU), {rss // 1024} MiB", file=sys.stderr)
        wall, rss, cpu, a_finished = astra_run(0)
        a_runs.append((wall, rss, cpu))
        print(f"run {i + 1}: ASTRA-sim {wall:.2f} s ({cpu:.2f} s CPU), {rss // 1024} MiB", file=sys.stderr)
    count_wall, count_rss, _, count_finished = astra_run(1)
    issued, last, log_files = astra_issued(logs)
    print(f"ASTRA-sim counting run (trace-enabled 1): {count_wall:.2f} s, {count_rss // 1024} MiB, "
          f"{issued:,} nodes issued in {log_files} log files", file=sys.stderr)

    ranks = h_report["ranks"]
    h_time = max(r["finish_time"] for r in ranks)
    h_ran, h_nodes = sum(r["ran"] for r in ranks), sum(r["nodes"] for r in ranks)
    a_time = max(a_finished.values(), default=0) * 1e-9
    h_wall = statistics.median(w for w, _, _ in h_runs)
    a_wall = statistics.median(w for w, _, _ in a_runs)

    def walls(runs):
        return ", ".join(f"{w:.2f}" for w, _, _ in runs)

    def cpus(runs):
        return ", ".join(f"{c:.2f}" for _, _, c in runs)

    def rss(runs):
        return f"{max(r for _, r, _ in runs) / 1024:,.0f} MiB"

    rotated = " in the logs kept (rotated: the oldest are gone)" if log_files >= 11 else ""
    lasts = sorted(set(last.values()))
    last_ids = f"{lasts[0]}" if len(lasts) == 1 else f"{lasts[0]}-{lasts[-1]}" if lasts else "none"
    print(f"{prefix}: {npus} ranks, {h_nodes:,} nodes; switch of {npus} NPUs, links "
          f"{args.bandwidth / 1e9:g} GB/s and {args.latency * 1e9:g} ns; rings; {args.runs} runs each, "
          "alternating.\n")
    print("| simulator | simulated time | nodes run | wall median | wall runs | CPU runs (user + system)"
          " | peak RSS (max over runs) |")
    print("|---|---|---|---|---|---|---|")
    print(f"| hetsim replay | {us(h_time)} | {h_ran:,} of {h_nodes:,} | {h_wall:.2f} s | {walls(h_runs)} s"
          f" | {cpus(h_runs)} s | {rss(h_runs)} |")
    print(f"| ASTRA-sim analytical, congestion-unaware | {us(a_time)} ({len(a_finished)} of {npus} ranks "
          f"finished) | {issued:,} issued{rotated}; last node issued on {len(last)} ranks: id {last_ids}"
          f" | {a_wall:.2f} s | {walls(a_runs)} s"
          f" | {cpus(a_runs)} s | {rss(a_runs)} |")
    print(f"\nwall hetsim / ASTRA-sim: {h_wall / a_wall:.3f}; simulated time hetsim / ASTRA-sim: "
          f"{h_time / a_time:.4f}" if a_time else "")
    print(f"ASTRA-sim counting run (trace-enabled 1, not in the median): {count_wall:.2f} s, "
          f"{count_rss / 1024:,.0f} MiB, {len(count_finished)} ranks finished")


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
    p.add_argument("--trace", metavar="PREFIX", help="compare on this trace alone (PREFIX.N.et), see above")
    args = p.parse_args()
    if not args.astra_bin:
        sys.exit("--astra-bin (or ASTRA_BIN): the folder of ASTRA-sim's analytical binaries")
    args.astra_src = args.astra_src or os.path.abspath(os.path.join(args.astra_bin, "../../../.."))
    for path in (args.hetsim, args.astra_bin, args.astra_src):
        if not os.path.exists(path):
            sys.exit(f"not found: {path}")
    if args.trace:
        with tempfile.TemporaryDirectory() as tmp:
            compare_trace(args, tmp)
        return
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
