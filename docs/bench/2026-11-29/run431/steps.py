#!/usr/bin/env python3
"""Run 431: NCCL's own account of each network step (its example profiler plugin, proxy steps and
kernel channels; NCCL_PROFILE_EVENT_MASK=88), per rank's dump file: the median time of each state
of a send step (SendGpuWait: the proxy waits for the kernel's data; SendPeerWait: for the
receiver's credit; SendWait: isend to test done) and of a receive step (RecvWait: irecv to test
done; RecvFlushWait; RecvGpuWait: test done to the kernel having consumed it), the kernel's time
per channel (KernelCh), and the proxy's turnaround: a receive's test done to the rank's next send
data seen (SendGpuWait's end). Usage: steps.py DUMP_FILE..."""
import json, re, sys, statistics as st, bisect
from collections import defaultdict

def pct(xs, p):
    xs = sorted(xs); return xs[min(len(xs) - 1, int(p / 100 * len(xs)))] if xs else float('nan')

def show(xs):
    return f'median {st.median(xs):7.2f} p10 {pct(xs, 10):7.2f} p90 {pct(xs, 90):7.2f} (n={len(xs)})' if xs else 'none'

for path in sys.argv[1:]:
    ev = defaultdict(dict)  # (name, id) -> {'b': ts, 'e': ts}
    for line in open(path):
        line = line.strip().rstrip(',')
        if not line.startswith('{'):
            continue
        try:
            e = json.loads(line)
        except Exception:
            continue
        ev[(e['name'], e['id'])][e['ph']] = e['ts']
    dur = defaultdict(list)
    for (name, i), be in ev.items():
        if 'b' in be and 'e' in be and be['e'] >= be['b'] > 0:
            dur[name].append(be['e'] - be['b'])
    print(f'{path}:')
    for name in ('SendGpuWait', 'SendPeerWait', 'SendWait', 'RecvWait', 'RecvFlushWait', 'RecvGpuWait', 'KernelCh', 'ProgressSend', 'ProgressRecv'):
        if dur[name]:
            print(f'  {name:<14} {show(dur[name])}')
    recv_done = sorted(be['e'] for (n, i), be in ev.items() if n == 'RecvWait' and 'e' in be and be['e'] > 0)
    data_seen = sorted(be['e'] for (n, i), be in ev.items() if n == 'SendGpuWait' and 'e' in be and be['e'] > 0)
    turn = []
    for t in recv_done:
        j = bisect.bisect_right(data_seen, t)
        if j < len(data_seen):
            turn.append(data_seen[j] - t)
    print(f'  receive done to next send data seen: {show(turn)}')
