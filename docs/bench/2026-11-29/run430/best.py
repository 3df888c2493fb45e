"""Runs 430: per shape and size, tcpxr's median time of the passes against the best Socket
tuning's (the lowest of the four medians): best/tcpxr (above 1: tcpxr faster), with the tuning
that won and the per-pass range of best-of-that-pass / tcpxr. `python3 best.py steps.txt c99`."""
import re, sys, statistics as st
from collections import defaultdict
d = defaultdict(lambda: defaultdict(dict))
for line in open(sys.argv[1]):
    m = re.match(r'\[\d+ s\] (\d)-(\w+)-(\w+)-r(\d) rc=0 wrong=(\d+) (.*)', line)
    if not m: continue
    np, op, v, p, w, rest = m.groups()
    for kv in rest.split():
        s, t = kv.split(':'); d[(np, op)][(v, int(s))][p] = float(t)
tx, socks = sys.argv[2], ['socket', 's1x1', 's2x2', 's4x4']
for k in d:
    print(f'{k[0]} ranks {k[1]}:   size    tcpxr  best socket (which) | best/tcpxr (per pass)')
    for s in sorted({s for v, s in d[k]}):
        if s == 0 or (tx, s) not in d[k]: continue
        t = d[k][(tx, s)]
        meds = {v: st.median(d[k][(v, s)].values()) for v in socks if (v, s) in d[k]}
        bv = min(meds, key=meds.get)
        per = [min(d[k][(v, s)][p] for v in socks if p in d[k][(v, s)]) / t[p] for p in t]
        print(f'  {s:>9} {st.median(t.values()):8.2f} {meds[bv]:8.2f} {bv:>8} | {meds[bv]/st.median(t.values()):5.2f} ({min(per):.2f}-{max(per):.2f})')
