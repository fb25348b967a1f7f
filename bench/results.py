#!/usr/bin/env python3
"""Results at scale (issue 26): what a report and the server cost, same machine, same run.

    python3 bench/results.py [--quick] [--sizes 10000,100000,1000000] [--skip-server]

Builds hetsim (release) and, where Debian's libsimgrid-dev and g++ are installed, the
SimGrid peer (bench/peers/simgrid.cpp). Then times, as whole processes, one run each of:
  ping-pong, 100,000 round trips (bench/pingpong): plain `hetsim run`, `--json`,
      `--json --detail processes`; SimGrid 3.32 in the same run;
  master-worker, W workers x 10 rounds (examples/master-worker/million.toml, `--label
      Worker=W`), for each W of --sizes: the same three, SimGrid at W <= 10,000 (its time grows
      faster than linearly: 17 s at 10,000 on the 2-core machine), and through
      the server: `hetsim serve` embedded (SQLite, one in-process worker) and `hetsim serve
      --amqp` + one `hetsim worker` on RabbitMQ (127.0.0.1:5672) with PostgreSQL
      (127.0.0.1:5432), from the submission to `done`, with the peak RSS of the process that
      simulated (the server, or the worker), then the latency of GET /api/runs/{id} (the
      summary) and of a page of 1,000 processes from the middle of the run (median of 5).
Local rows are the median of --runs runs (one at W = 10^6); server rows are one run each.
Prints Markdown tables for docs/PERFORMANCE.md.
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

from compare import HETSIM, ROOT, median  # the peers' benchmark: same timing of whole processes

MW_APP = "examples/master-worker/app.rhai"
MW_SYSTEM = "examples/master-worker/million.toml"
AMQP = "amqp://guest:guest@127.0.0.1:5672/%2f"


def build(tmp):
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "hetsim"], cwd=ROOT, check=True)
    try:
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "simgrid"], capture_output=True, text=True,
                               check=True).stdout.split()
    except (subprocess.CalledProcessError, FileNotFoundError):
        print("SimGrid not found (apt-get install libsimgrid-dev g++): its rows are left out", file=sys.stderr)
        return None
    simgrid = os.path.join(tmp, "simgrid")
    subprocess.run(["g++", "-O2", "-std=c++17", "-o", simgrid, os.path.join(ROOT, "bench/peers/simgrid.cpp")] + flags,
                   check=True)
    return simgrid


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(port, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method,
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.loads(r.read() or b"null")


def peak_rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def latency_ms(port, path, times=5):
    samples = []
    for _ in range(times):
        start = time.perf_counter()
        http(port, "GET", path)
        samples.append((time.perf_counter() - start) * 1e3)
    return statistics.median(samples)


def wait_healthy(port, deadline=60):
    end = time.time() + deadline
    while time.time() < end:
        try:
            if http(port, "GET", "/api/health")["status"] == "ok":
                return
        except OSError:
            pass
        time.sleep(0.2)
    sys.exit(f"the server on {port} did not become healthy")


def through_server(workers, tmp, broker):
    """(wall s from submission to done, peak RSS MiB of the simulating process, summary ms,
    page ms) of master-worker W = workers through a fresh server."""
    port = free_port()
    procs = []
    if broker:
        db_name = f"hetsim_bench_{os.getpid()}_{workers}"
        subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-qc", f"DROP DATABASE IF EXISTS {db_name}"],
                       check=True)
        subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-qc", f"CREATE DATABASE {db_name}"], check=True)
        db = f"postgres://postgres@127.0.0.1/{db_name}"
        queue = f"bench{os.getpid()}x{workers}"
        server = subprocess.Popen([HETSIM, "serve", "--db", db, "--amqp", AMQP, "--bind", f"127.0.0.1:{port}"],
                                  cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(server)
        wait_healthy(port)
        worker = subprocess.Popen([HETSIM, "worker", "--queue", queue, "--db", db, "--amqp", AMQP],
                                  cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(worker)
        simulating = worker
    else:
        db = os.path.join(tmp, f"serve{workers}.db")
        queue = "default"
        server = subprocess.Popen([HETSIM, "serve", "--db", db, "--bind", f"127.0.0.1:{port}", "--workers", "1"],
                                  cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(server)
        wait_healthy(port)
        simulating = server
    try:
        with open(os.path.join(ROOT, MW_APP)) as f:
            app = f.read()
        with open(os.path.join(ROOT, MW_SYSTEM)) as f:
            system = f.read()
        body = {"queue": queue, "app": app, "system": system, "labels": {"Worker": workers}}
        start = time.perf_counter()
        run = http(port, "POST", "/api/runs", body)["id"]
        while True:
            status = http(port, "GET", f"/api/runs/{run}")["status"]
            if status in ("done", "failed", "cancelled"):
                break
            time.sleep(0.2)
        wall = time.perf_counter() - start
        if status != "done":
            sys.exit(f"run {run} through the server: {status}: {http(port, 'GET', f'/api/runs/{run}')['error']}")
        rss = peak_rss_mib(simulating.pid)
        summary = latency_ms(port, f"/api/runs/{run}")
        page = latency_ms(port, f"/api/runs/{run}/processes?offset={workers // 2}&limit=1000")
        return wall, rss, summary, page
    finally:
        for p in reversed(procs):
            p.terminate()
            p.wait()
        if broker:
            subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-qc",
                            f"DROP DATABASE IF EXISTS {db_name} WITH (FORCE)"], check=False)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="W = 1,000 and 10,000 only, 10,000 round trips")
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--skip-server", action="store_true")
    parser.add_argument("--runs", type=int, default=3, help="runs per local measurement (1 at W = 10^6)")
    args = parser.parse_args()
    trips = 10_000 if args.quick else 100_000
    sizes = [1_000, 10_000] if args.quick else [int(w) for w in args.sizes.split(",")]
    sg_log = "--log=root.thres:critical"
    levels = [("plain", []), ("--json", ["--json"]), ("--json --detail processes", ["--json", "--detail", "processes"])]
    local, served = [], []
    with tempfile.TemporaryDirectory() as tmp:
        simgrid = build(tmp)
        pp = [HETSIM, "run", "--app", "bench/pingpong/app.rhai", "--system", "bench/pingpong/system.toml",
              "--var", f"roundTrips={trips}"]
        plain = None
        for name, extra in levels:
            wall, rss = median(pp + extra, args.runs)
            plain = plain or (wall, rss)
            local.append((f"ping-pong, {trips:,} round trips", f"hetsim {name}", wall, rss, plain))
        if simgrid:
            wall, rss = median([simgrid, "pingpong", str(trips), sg_log], args.runs)
            local.append(("", "SimGrid 3.32", wall, rss, plain))
        for w in sizes:
            mw = [HETSIM, "run", "--app", MW_APP, "--system", MW_SYSTEM, "--label", f"Worker={w}"]
            plain = None
            for name, extra in levels:
                wall, rss = median(mw + extra, args.runs if w < 1_000_000 else 1)
                plain = plain or (wall, rss)
                local.append((f"master-worker W={w:,} x 10", f"hetsim {name}", wall, rss, plain))
            if simgrid and w <= 10_000:
                wall, rss = median([simgrid, "masterworker", str(w), "10", sg_log], args.runs)
                local.append(("", "SimGrid 3.32", wall, rss, plain))
            if not args.skip_server:
                for name, broker in [("serve, SQLite, embedded worker", False),
                                     ("serve + worker, PostgreSQL, RabbitMQ", True)]:
                    wall, rss, summary, page = through_server(w, tmp, broker)
                    served.append((f"master-worker W={w:,} x 10", name, wall, rss, plain, summary, page))
    print("| workload | run | wall [s] | peak RSS [MiB] | time / plain run | RSS / plain run |")
    print("|---|---|---:|---:|---:|---:|")
    for workload, what, wall, rss, (plain_wall, plain_rss) in local:
        print(f"| {workload} | {what} | {wall:.2f} | {rss:.0f} | {wall / plain_wall:.2f} | {rss / plain_rss:.2f} |")
    if served:
        print()
        print("| workload | through | submit to done [s] | peak RSS of the simulating process [MiB] | "
              "time / plain run | GET summary [ms] | GET 1,000 processes [ms] |")
        print("|---|---|---:|---:|---:|---:|---:|")
        for workload, what, wall, rss, (plain_wall, _), summary, page in served:
            print(f"| {workload} | {what} | {wall:.2f} | {rss:.0f} | {wall / plain_wall:.2f} | {summary:.1f} | "
                  f"{page:.1f} |")


if __name__ == "__main__":
    main()
