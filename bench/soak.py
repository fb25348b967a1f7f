#!/usr/bin/env python3
"""A soak of the service under faults (issue 27, item 7; docs/RELIABILITY.md "Soak").

    python3 bench/soak.py [--minutes 10] [--rate 20] [--workers 4] [--lease-seconds 10]

Builds hetsim (release), starts `hetsim serve --amqp` on a fresh PostgreSQL database and
--workers `hetsim worker` processes on one RabbitMQ queue, and submits one small run
(POST /api/runs) every 1/--rate seconds for --minutes. During it, at 20 % of the time one
worker is killed (SIGKILL, not restarted), and at 50 % another is frozen (SIGSTOP) and
thawed (SIGCONT) at 70 %; the kill and the freeze each wait for their worker to hold a run,
so that each takes a run down with it. Then it stops submitting, waits for every run to reach a final
status, and prints a Markdown table: runs submitted, done, failed, lost (accepted but not
final, or done without a result), doubled (a result stored by two attempts: counted from
the workers' logs), runs retried (attempts > 1), and the p50/p99 submit latency.
Needs the machine's PostgreSQL (127.0.0.1:5432, trust) and RabbitMQ (guest/guest).
"""
import argparse
import collections
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HETSIM = os.path.join(ROOT, "target", "release", "hetsim")
AMQP = "amqp://guest:guest@127.0.0.1:5672/%2f"
FINAL = {"done", "failed", "cancelled"}

# Each run spins for `spin` steps of a few hundred microseconds: long enough for a kill or a
# freeze to land mid-run.
APP = """let n = 0;
for i in 0..spin { for j in 0..2000 { n += j; } sim.sleep(0.001); }
sim.compute(#{ ops: 1e9 });
"""
SYSTEM = '[[node]]\nid = "a"\ncomponent = "Intel Core i7-4790K"\nmodel = "cpu-flops"\nlabels = { P = 1 }\n'

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from service import free_port, psql, wait_healthy  # noqa: E402


def request(port, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method,
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as response:
        return response.status, json.loads(response.read() or b"null")


def submitter(port, queue, rate, seconds, accepted, latencies, refused):
    start = time.perf_counter()
    n = 0
    while True:
        due = start + n / rate
        if due - start >= seconds:
            return
        time.sleep(max(0.0, due - time.perf_counter()))
        body = {"queue": queue, "app": APP, "system": SYSTEM, "variables": {"spin": random.randint(1, 200)}}
        t0 = time.perf_counter()
        try:
            status, run = request(port, "POST", "/api/runs", body)
            latencies.append(time.perf_counter() - t0)
            if status == 202:
                accepted.append(run["id"])
            else:
                refused.append(status)
        except OSError as e:
            refused.append(str(e))
        n += 1


def wait_until_holding(port, queue, worker):
    """The id of a run `worker` holds, once it holds one (None after 60 s)."""
    deadline = time.perf_counter() + 60
    while time.perf_counter() < deadline:
        _, runs = request(port, "GET", f"/api/runs?queue={queue}&status=running&limit=1000")
        for run in runs:
            if run["worker"] == worker:
                return run["id"]
        time.sleep(0.005)
    return None


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--rate", type=float, default=20, help="submissions per second")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--lease-seconds", type=int, default=10)
    args = parser.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "hetsim"], cwd=ROOT, check=True)
    seconds = args.minutes * 60
    db_name = f"hetsim_soak_{os.getpid()}"
    psql(f"DROP DATABASE IF EXISTS {db_name}")
    psql(f"CREATE DATABASE {db_name}")
    db = f"postgres://postgres@127.0.0.1/{db_name}"
    queue = f"soak-{os.getpid()}"
    logs = tempfile.mkdtemp(prefix="hetsim-soak-")
    port = free_port()

    def start(name, argv):
        log = open(os.path.join(logs, f"{name}.log"), "w")
        return subprocess.Popen([HETSIM] + argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log)

    server = start("server", ["serve", "--db", db, "--amqp", AMQP, "--bind", f"127.0.0.1:{port}"])
    workers = []
    events = []
    hit = []
    try:
        wait_healthy(port)
        workers = [start(f"w{i}", ["worker", "--db", db, "--amqp", AMQP, "--queue", queue, "--name", f"w{i}",
                                   "--lease-seconds", str(args.lease_seconds)]) for i in range(args.workers)]
        accepted, latencies, refused = [], [], []
        thread = threading.Thread(target=submitter,
                                  args=(port, queue, args.rate, seconds, accepted, latencies, refused))
        began = time.perf_counter()
        thread.start()
        plan = [(0.2, "kill -9 w0", "w0", lambda: workers[0].kill()),
                (0.5, "SIGSTOP w1", "w1", lambda: workers[1].send_signal(signal.SIGSTOP)),
                (0.7, "SIGCONT w1", None, lambda: workers[1].send_signal(signal.SIGCONT))]
        for share, what, holder, act in plan:
            time.sleep(max(0.0, began + share * seconds - time.perf_counter()))
            held = holder and wait_until_holding(port, queue, holder)
            act()
            if held:
                hit.append(held)
            events.append(f"{what} at {time.perf_counter() - began:.0f} s" + (f" holding run {held}" if held else ""))
        thread.join()
        submitted_for = time.perf_counter() - began
        statuses = {}
        deadline = time.perf_counter() + 600
        while time.perf_counter() < deadline:
            _, runs = request(port, "GET", f"/api/runs?queue={queue}&limit=1000000")
            statuses = {r["id"]: r for r in runs}
            if all(statuses.get(i, {}).get("status") in FINAL for i in accepted):
                break
            time.sleep(2)
        drained_after = time.perf_counter() - began
    finally:
        for p in workers + [server]:
            if p.poll() is None:
                p.send_signal(signal.SIGCONT)
                p.terminate()
                p.wait()

    stored = collections.Counter()
    pattern = re.compile(r'result stored run="([^"]+)"')
    for name in os.listdir(logs):
        with open(os.path.join(logs, name)) as f:
            for line in f:
                m = pattern.search(line)
                if m:
                    stored[m.group(1)] += 1
    counts = collections.Counter(statuses.get(i, {}).get("status", "missing") for i in accepted)
    lost = sum(1 for i in accepted if statuses.get(i, {}).get("status") not in FINAL
               or (statuses[i]["status"] == "done" and statuses[i].get("result") is None))
    doubled = sum(1 for n in stored.values() if n > 1)
    retried = sum(1 for i in accepted if statuses.get(i, {}).get("attempts", 0) > 1)
    psql(f"DROP DATABASE IF EXISTS {db_name} WITH (FORCE)")
    for q in (f"hetsim.{queue}", f"hetsim.{queue}.dead"):
        subprocess.run(["rabbitmqctl", "delete_queue", q], stdin=subprocess.DEVNULL, capture_output=True)

    print(f"soak: {args.minutes:g} min at {args.rate:g} submissions/s, {args.workers} workers, "
          f"lease {args.lease_seconds} s; {'; '.join(events)}; submitting took {submitted_for:.0f} s, "
          f"every run final after {drained_after:.0f} s; logs in {logs}")
    print("| submitted | refused | done | failed | lost | doubled | retried (attempts > 1) | submit p50 [ms] | submit p99 [ms] |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| {len(accepted)} | {len(refused)} | {counts['done']} | {counts['failed']} | {lost} | {doubled} | "
          f"{retried} | {1e3 * percentile(latencies, 50):.1f} | {1e3 * percentile(latencies, 99):.1f} |")
    for run in hit:
        r = statuses.get(run, {})
        print(f"run {run}, held by a worker when it was hit: {r.get('status')}, attempts {r.get('attempts')}, "
              f"stored by {r.get('worker')}, 'result stored' logged {stored[run]} time(s)")
    if refused:
        print(f"refused: {collections.Counter(map(str, refused)).most_common(5)}")
    failed = [statuses[i].get("error") for i in accepted if statuses.get(i, {}).get("status") == "failed"]
    if failed:
        print(f"failures: {collections.Counter(failed).most_common(5)}")


if __name__ == "__main__":
    main()
