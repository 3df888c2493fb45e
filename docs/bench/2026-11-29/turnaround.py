#!/usr/bin/env python3
"""What a small message's round trip spends between a receive and the next send, tcpxr against
plain TCP (BENCHMARKS.md, "The same code four times": run 448's reason).

Runs `tcpxr-bench latency --size 8` under `perf record` of the socket calls' tracepoints (root, or
kernel.perf_event_paranoid at -1) and reads, per thread, the calls from each successful receive to
the next send: their most common sequence, with the median time of each step, and the median
turnaround. tcpxr's calls are recvmsg/sendmsg, the plain-TCP baseline's recvfrom/sendto, so one
run of the bench gives both. Tracing adds about a microsecond to every call; compare the two paths
with each other, not with the bench's untraced figures.

    python3 docs/bench/2026-11-29/turnaround.py [PATH_TO_TCPXR_BENCH] [--iters N]
"""
import collections
import os
import re
import subprocess
import sys
import tempfile

EVENTS = ",".join(
    f"syscalls:sys_{edge}_{call}"
    for call in ("recvmsg", "recvfrom", "sendmsg", "sendto")
    for edge in ("enter", "exit")
)
LINE = re.compile(r"\s*(\d+)\s+([\d.]+):\s+syscalls:sys_(enter|exit)_(\w+):\s*(.*)")
# The bench's 8 B messages: tcpxr's 16 B header and its payload, read by one gathered recvmsg;
# plain TCP's 8 B.
MESSAGE_BYTES = {"recvmsg": 24, "recvfrom": 8}
PATHS = (("tcpxr", "recvmsg", "sendmsg"), ("plain TCP", "recvfrom", "sendto"))


def events(bench, iters):
    """(time in us, thread, 'enter'|'exit', call, return value or None), in time order."""
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "perf.data")
        subprocess.run(
            ["perf", "record", "-q", "-o", data, "-e", EVENTS, bench, "latency", "--size", "8", "--iters", str(iters)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        text = subprocess.run(
            ["perf", "script", "-i", data, "--ns", "-F", "tid,time,event,trace"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    out = []
    for line in text.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        ret = None
        if m[3] == "exit":
            ret = int(m[5].split()[0], 16)
            ret = ret - (1 << 64) if ret >= 1 << 63 else ret
        out.append((float(m[2]) * 1e6, int(m[1]), m[3], m[4], ret))
    out.sort()
    return out


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else float("nan")


def turnaround(evs, recv, send):
    """The calls each thread makes from a successful receive of one message to its next send."""
    open_since = {}  # thread -> [(step name, time)] since its last successful receive
    sequences = collections.Counter()
    steps = collections.defaultdict(list)
    totals = []
    for t, tid, edge, call, ret in evs:
        if call not in (recv, send):
            continue
        if edge == "exit" and call == recv and ret == MESSAGE_BYTES[recv]:
            open_since[tid] = [(f"{recv} returns the message", t)]
            continue
        if tid not in open_since:
            continue
        name = f"{call} {edge}" + (" (nothing: EAGAIN)" if ret == -11 else "")
        open_since[tid].append((name, t))
        if edge == "enter" and call == send:
            seq = open_since.pop(tid)
            key = tuple(n for n, _ in seq)
            sequences[key] += 1
            for i in range(1, len(seq)):
                steps[(key, i)].append(seq[i][1] - seq[i - 1][1])
            totals.append(seq[-1][1] - seq[0][1])
    return sequences, steps, totals


def main():
    args = sys.argv[1:]
    iters = 20000
    if "--iters" in args:
        i = args.index("--iters")
        iters = int(args[i + 1])
        del args[i : i + 2]
    bench = args[0] if args else "target/release/tcpxr-bench"
    evs = events(bench, iters)
    for label, recv, send in PATHS:
        sequences, steps, totals = turnaround(evs, recv, send)
        print(f"{label}: from a receive to the next send, median {median(totals):.2f} us"
              f" over {len(totals)} round trips")
        for key, count in sequences.most_common(1):
            print(f"  most common ({count} of {len(totals)}):")
            for i in range(1, len(key)):
                print(f"    {key[i - 1]:<40} -> {key[i]:<40} {median(steps[(key, i)]):6.2f} us")


if __name__ == "__main__":
    main()
