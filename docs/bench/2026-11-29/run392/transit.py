#!/usr/bin/env python3
"""run392, 2 ranks: per message, from the sender's write (enter) to the receiver's read of it
(exit of the first read that returns its bytes), and what the receiver did meanwhile: the failed
polls after the write, the successful read's own duration."""
import lzma, re, sys, statistics as st
from collections import defaultdict
LINE = re.compile(r'\s*(.+?)\s+(\d+)/(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+syscalls:(\w+):\s*(.*)')
def pct(xs, p):
    xs = sorted(xs); return xs[min(len(xs)-1, int(p/100*len(xs)))]
def show(name, xs): return f'{name} median {st.median(xs):5.2f} p10 {pct(xs,10):5.2f} p90 {pct(xs,90):5.2f} mean {st.mean(xs):5.2f}'
for path in sys.argv[1:]:
    ev = defaultdict(list)
    for line in lzma.open(path, 'rt'):
        m = LINE.match(line)
        if m:
            comm, pid, tid, cpu, t, name, rest = m.groups()
            ev[tid].append((float(t) * 1e6, name, rest))
    prox = sorted(t for t, es in ev.items() if sum(1 for e in es if e[1] in ('sys_enter_writev', 'sys_enter_sendto')) > 500)
    print(path)
    # each thread's messages: writes, and arrivals (read exit of a message's first bytes)
    writes, arrivals = {}, {}
    for tid in prox:
        es = ev[tid]
        writes[tid] = [e[0] for e in es if e[1] in ('sys_enter_writev', 'sys_enter_sendto')]
        arr = []
        enter = None
        for t, name, rest in es:
            if name == 'sys_enter_recvfrom': enter = t
            elif name == 'sys_exit_recvfrom':
                ret = int(rest.split()[0], 16)
                if ret >= 1 << 63: continue
                if ret == 4 or ret % 0x30 == 0:   # Socket: the size; tcpxr: header + payload
                    n = 1 if ret == 4 else ret // 0x30
                    arr += [(t, enter)] * n
        arrivals[tid] = arr
    a, b = prox
    for src, dst in ((a, b), (b, a)):
        w, r = writes[src], arrivals[dst]
        n = min(len(w), len(r))
        assert abs(len(w) - len(r)) < 3, (len(w), len(r))
        rng = range(n // 10, n * 9 // 10)
        transit = [r[i][0] - w[i] for i in rng]
        read_dur = [r[i][0] - r[i][1] for i in rng]
        enter_after = [r[i][1] - w[i] for i in rng]
        print(f'  {src}->{dst}: ' + show('transit', transit))
        print(f'  {" " * len(src + dst)}    ' + show('its read ', read_dur) + ';  ' + show('read entered after the write', enter_after))
