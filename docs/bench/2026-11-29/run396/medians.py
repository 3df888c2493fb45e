#!/usr/bin/env python3
"""run396: per op and size, each config's median time over the three passes, and tcpxr's ratio to
the better of Socket default and 1x1 (above 1: tcpxr faster), with each pass's ratio.
Usage: medians.py steps.txt (tar -xJOf docs/bench/2026-11-29/raw.tar.xz run396/steps.txt)."""
import re, sys, statistics as st
from collections import defaultdict
d = defaultdict(lambda: defaultdict(list))
for line in open(sys.argv[1]):
    m = re.match(r'\[\d+ s\] (\d)-(\w+)-(\w+)-r(\d) rc=0 wrong=(\d+) (.*)', line)
    if not m:
        continue
    np, op, v, p, w, rest = m.groups()
    for kv in rest.split():
        s, t = kv.split(':')
        if s != '0':
            d[(np, op)][(v, int(s))].append(float(t))
for (np, op), t in d.items():
    print(f'{np} ranks {op}: size, tcpxr, Socket default, Socket 1x1 (us, medians), ratio, per pass')
    for s in sorted({s for v, s in t}):
        a, b, c = (st.median(t[(v, s)]) for v in ('c80', 'socket', 'socket1x1'))
        passes = [round(min(x, y) / z, 2) for x, y, z in zip(t[('socket', s)], t[('socket1x1', s)], t[('c80', s)])]
        print(f'  {s:>6} {a:7.2f} {b:7.2f} {c:7.2f} {min(b, c) / a:5.2f} {passes}')
