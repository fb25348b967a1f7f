"""SimPy 4.1.2 peer of hetsim's ping-pong benchmark: 2 processes, N round trips of
1000-byte messages over one link of 50 us + 1000 B / 125 MB/s. A send is non-blocking: a
delivery process carries each message, as hetsim's engine schedules an arrival event."""
import sys

import simpy

DELAY = 50e-6 + 1000 / 125e6


def deliver(env, store):
    yield env.timeout(DELAY)
    yield store.put(1000)


def ping(env, n, inbox, outbox):
    for _ in range(n):
        env.process(deliver(env, outbox))
        yield inbox.get()


def pong(env, n, inbox, outbox):
    for _ in range(n):
        yield inbox.get()
        env.process(deliver(env, outbox))


def main(n):
    env = simpy.Environment()
    to_ping, to_pong = simpy.Store(env), simpy.Store(env)
    env.process(ping(env, n, to_ping, to_pong))
    env.process(pong(env, n, to_pong, to_ping))
    env.run()
    print(f"simulated time {env.now:.9f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100000)
