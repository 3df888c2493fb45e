#!/usr/bin/env python3
"""Each pass's own median of the later cycles (nccl-tests -N) per size and config, passes side by
side (r1/r2/r3), for run 309's configs:

    tar xJf docs/bench/2026-11-28/raw.tar.xz -C /tmp run309
    python3 docs/bench/2026-11-28/run309/passes.py /tmp/run309/r4
"""
import collections, glob, os, statistics, sys
d = sys.argv[1]
data = collections.defaultdict(list)
for f in sorted(glob.glob(f"{d}/r*/*.txt")):
    if 'settings' in f: continue
    p = f.split('/')[-2]; cfg = os.path.basename(f).split('.',1)[1].rsplit('.',1)[0]
    seen = collections.Counter()
    for line in open(f):
        t = line.split()
        if len(t) > 10 and t[0].isdigit() and t[1].isdigit():
            s = int(t[0]); 
            if seen[s] > 0: data[(cfg, s, p)].append(float(t[5]))
            seen[s] += 1
cfgs = sorted({k[0] for k in data}, key=lambda c: ['tcpxr-host','tcpxr-host+tree','tcpxr-host+row','socket','socket+tree'].index(c) if c in ['tcpxr-host','tcpxr-host+tree','tcpxr-host+row','socket','socket+tree'] else 9)
print("size".rjust(6), *[c[:16].rjust(20) for c in cfgs])
for s in sorted({k[1] for k in data}):
    row=[]
    for c in cfgs:
        row.append("/".join(f"{statistics.median(data[(c,s,p)]):.1f}" for p in ('r1','r2','r3') if data[(c,s,p)]).rjust(20))
    print(str(s).rjust(6), *row)
