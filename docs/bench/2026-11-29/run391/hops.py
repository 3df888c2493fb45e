#!/usr/bin/env python3
"""Per message: transit (sender's write -> receiver's first read of it) and each rank's turnaround
(its read of op k's message -> its write of op k+1's), from run391's perf events.
Usage: hops.py EVENTS.txt.xz ... (2-rank files: messages matched in order on the one connection)."""
import lzma, re, sys, statistics as st
from collections import defaultdict

def load(path):
    ev = defaultdict(list)  # tid -> [(t, kind, detail)]
    for line in lzma.open(path, 'rt'):
        m = re.match(r'\s*(.+?)\s+(\d+)/(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+syscalls:(\w+):\s*(.*)', line)
        if not m: continue
        comm, pid, tid, cpu, t, name, rest = m.groups()
        t = float(t) * 1e6
        if name in ('sys_enter_writev', 'sys_enter_sendto'):
            fd = int(re.search(r'fd: (0x[0-9a-f]+)', rest).group(1), 16)
            ev[(pid, tid)].append((t, 'S', fd))
        else:
            ev[(pid, tid)].append((t, 'R', int(rest.strip(), 16)))
    return ev

def pct(xs, p):
    xs = sorted(xs); return xs[min(len(xs)-1, int(p/100*len(xs)))]

def summary(name, xs):
    return f"{name}: median {st.median(xs):6.2f} p10 {pct(xs,10):6.2f} p90 {pct(xs,90):6.2f} mean {st.mean(xs):6.2f}"

for path in sys.argv[1:]:
    ev = load(path)
    # the proxy threads: the two (or more) threads with the most sends
    prox = sorted(ev, key=lambda k: -sum(1 for e in ev[k] if e[1]=='S'))
    nranks = len({k[0] for k in prox[:8] if sum(1 for e in ev[k] if e[1]=='S') > 1000})
    prox = [k for k in prox if sum(1 for e in ev[k] if e[1]=='S') > 1000]
    print(path, 'proxy threads', prox)
    if len(prox) != 2:
        continue
    arrivals = {}
    sends = {}
    for k in prox:
        es = ev[k]
        sends[k] = [t for t, kind, d in es if kind == 'S']
        # a message's arrival: the first read after the previous message was complete. tcpxr: one
        # read per message; Socket: a 4-byte size then the payload.
        arr = []
        sock = any(d == 4 for t, kind, d in es if kind == 'R')
        for t, kind, d in es:
            if kind != 'R': continue
            if sock:
                if d == 4: arr.append(t)
            else:
                arr.extend([t] * max(1, d // 0x30))
        arrivals[k] = arr
    a, b = prox
    out = {}
    for src, dst in ((a, b), (b, a)):
        s, r = sends[src], arrivals[dst]
        n = min(len(s), len(r))
        # align: the arrival of send i is the first arrival after it; find the offset from the middle
        transit = [r[i] - s[i] for i in range(len(s)//4, n - 10)]
        out[(src, dst)] = transit
        print(' ', summary(f'transit {src[1]}->{dst[1]} (n={len(transit)}, {len(s)} sends, {len(r)} arrivals)', transit))
    for k in prox:
        s, r = sends[k], arrivals[k]
        n = min(len(s), len(r))
        turn = [s[i+1] - r[i] for i in range(len(s)//4, n - 10)]
        wait = [r[i] - s[i] for i in range(len(s)//4, n - 10)]
        cyc = [s[i+1] - s[i] for i in range(len(s)//4, n - 10)]
        print(' ', summary(f'rank {k[1]} own send -> arrival', wait))
        print(' ', summary(f'rank {k[1]} arrival -> next send ', turn))
        print(' ', summary(f'rank {k[1]} cycle              ', cyc))
