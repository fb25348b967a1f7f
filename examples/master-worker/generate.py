#!/usr/bin/env python3
"""Writes a master-worker system model with W workers, each on its own node with its own
Gigabit Ethernet link to the master: `python3 generate.py W > system.toml`."""
import sys

def system(workers: int) -> str:
    out = [
        f'name = "master-worker-{workers}"',
        "",
        "[[component]]",
        'name = "Gigabit Ethernet"',
        'kind = "NETWORK"',
        'source = "IEEE 802.3ab: 125 MB/s; 50 us startup is a typical TCP round trip half"',
        "attributes = { bandwidth = 125e6, startup = 50e-6, lambda = 0.94 }",
        "",
        "[[node]]",
        'id = "master"',
        'component = "Intel Core i7-4790K"',
        'model = "cpu-flops"',
        "labels = { Master = 1 }",
    ]
    for w in range(workers):
        out += ["", "[[node]]", f'id = "w{w}"', 'component = "Intel Core i7-4790K"',
                'model = "cpu-flops"', "labels = { Worker = 1 }"]
    for w in range(workers):
        out += ["", "[[link]]", f'between = ["master", "w{w}"]', 'component = "Gigabit Ethernet"']
    return "\n".join(out) + "\n"

if __name__ == "__main__":
    sys.stdout.write(system(int(sys.argv[1]) if len(sys.argv) > 1 else 8))
