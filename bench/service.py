#!/usr/bin/env python3
"""End-to-end runs per second of the simulation service (issue 4 benchmark).

    python3 bench/service.py [--runs 1000]

Builds hetsim (release), then for each setup submits one sweep of --runs runs of a small
model (the thesis application with 10^6 elements, computeIntensity = 1..runs) and times it
from the submission to the last result committed (`hetsim sweep --wait`):
  - PostgreSQL + RabbitMQ: `hetsim serve --amqp` publishing, two `hetsim worker` processes;
  - embedded: `hetsim serve` on a SQLite file with two in-process workers.
Needs the machine's PostgreSQL (127.0.0.1:5432, trust) and RabbitMQ (guest/guest).
"""
import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HETSIM = os.path.join(ROOT, "target", "release", "hetsim")
AMQP = "amqp://guest:guest@127.0.0.1:5672/%2f"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(port):
    for _ in range(300):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=1)
            return
        except OSError:
            time.sleep(0.1)
    sys.exit(f"server on {port} never became healthy")


def psql(sql):
    subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", "postgres", "-qc", sql], check=True)


def sweep(port, queue, runs):
    start = time.perf_counter()
    subprocess.run([HETSIM, "sweep", "--server", f"http://127.0.0.1:{port}", "--queue", queue,
                    "--app", "examples/gajger/app.rhai", "--system", "examples/gajger/gtx970.toml",
                    "--var", "occupancy=64", "--var", "blockSize=256", "--var", "numElements=1000000",
                    "--var", "computeIntensity=" + ",".join(str(i) for i in range(1, runs + 1)),
                    "--wait", "--json"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=1000)
    args = parser.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "hetsim"], cwd=ROOT, check=True)
    quiet = dict(cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results = []

    db_name = f"hetsim_bench_{os.getpid()}"
    psql(f"DROP DATABASE IF EXISTS {db_name}")
    psql(f"CREATE DATABASE {db_name}")
    db = f"postgres://postgres@127.0.0.1/{db_name}"
    queue = f"bench-{os.getpid()}"
    port = free_port()
    procs = [subprocess.Popen([HETSIM, "serve", "--db", db, "--amqp", AMQP, "--bind", f"127.0.0.1:{port}"], **quiet)]
    try:
        wait_healthy(port)
        procs += [subprocess.Popen([HETSIM, "worker", "--db", db, "--amqp", AMQP, "--queue", queue, "--name", f"b{i}"],
                                   **quiet) for i in range(2)]
        seconds = sweep(port, queue, args.runs)
        results.append(("PostgreSQL + RabbitMQ, 2 worker processes", seconds))
    finally:
        for p in procs:
            p.terminate()
            p.wait()
        psql(f"DROP DATABASE IF EXISTS {db_name} WITH (FORCE)")
        for q in (f"hetsim.{queue}", f"hetsim.{queue}.dead"):
            subprocess.run(["rabbitmqctl", "delete_queue", q], stdin=subprocess.DEVNULL, capture_output=True)

    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        server = subprocess.Popen([HETSIM, "serve", "--db", os.path.join(tmp, "bench.db"), "--workers", "2",
                                   "--bind", f"127.0.0.1:{port}"], **quiet)
        try:
            wait_healthy(port)
            results.append(("SQLite embedded, 2 in-process workers", sweep(port, "default", args.runs)))
        finally:
            server.terminate()
            server.wait()

    print(f"| setup | runs | wall [s] | runs per second |")
    print("|---|---|---|---|")
    for name, seconds in results:
        print(f"| {name} | {args.runs} | {seconds:.2f} | {args.runs / seconds:.0f} |")


if __name__ == "__main__":
    main()
