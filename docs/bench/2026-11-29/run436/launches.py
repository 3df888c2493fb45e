#!/usr/bin/env python3
"""Run 436 (and 435): medians over launches: each configuration's time at each size is the median of its launches
(one per round); ratio = the best Socket tuning's median / tcpxr's. Usage: launches.py
steps.txt TCPXR_VARIANT [SOCKET_VARIANTS...]"""
import re, sys, statistics as st
from collections import defaultdict
path, mine, *peers = sys.argv[1:]
peers = peers or ['socket', 's1x1', 's2x2', 's4x4']
t = defaultdict(list)  # (np, op, variant, size) -> times
for line in open(path):
    m = re.search(r'\] (\d+)-(\w+?)-([a-z0-9]+)-[rs]\d+ rc=0 wrong=0 (.*)', line)
    if not m: continue
    np_, op, v, rest = m.groups()
    for kv in rest.split():
        size, us = kv.split(':'); t[(np_, op, v, int(size))].append(float(us))
shapes = sorted({(k[0], k[1]) for k in t})
for np_, op in shapes:
    sizes = sorted({k[3] for k in t if k[:2] == (np_, op) and k[3] > 0})
    print(f'{np_} ranks {op}: median us over launches (n), best Socket tuning, ratio best/{mine} (per-launch range of {mine})')
    for s in sizes:
        mv = t[(np_, op, mine, s)]
        if not mv: continue
        ps = {p: st.median(t[(np_, op, p, s)]) for p in peers if t[(np_, op, p, s)]}
        best = min(ps, key=ps.get)
        print(f'  {s:>8} {mine} {st.median(mv):7.2f} ({len(mv)}; {min(mv):.2f}-{max(mv):.2f})  ' +
              ' '.join(f'{p} {ps[p]:7.2f}' for p in peers if p in ps) + f'  best {best}: {ps[best]/st.median(mv):.2f}')
