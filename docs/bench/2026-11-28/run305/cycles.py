#!/usr/bin/env python3
"""Medians of nccl-tests outputs run with -N (several cycles in one process), split into the first
cycle and the later ones (which run the small sizes after the larger sizes of the cycle before).

    tar xJf docs/bench/2026-11-28/raw.tar.xz -C /tmp run305 run307
    python3 docs/bench/2026-11-28/run305/cycles.py /tmp/run305   # r<ranks>-<lib>-<pass>.log
    python3 docs/bench/2026-11-28/run305/cycles.py /tmp/run307   # <lib>.log, one launch each
"""
import collections, glob, os, re, statistics, sys

d = sys.argv[1]
data = collections.defaultdict(list)  # (ranks, lib, size, later cycle) -> times in us
for f in sorted(glob.glob(f"{d}/*.log")):
    m = re.match(r"r(\d)-(\w+)-\d+\.log$", os.path.basename(f)) or re.match(r"()(\w+)\.log$", os.path.basename(f))
    ranks, lib = m.groups()
    seen = collections.Counter()
    for line in open(f):
        t = line.split()
        if len(t) > 10 and t[0].isdigit() and t[1].isdigit():
            s = int(t[0])
            data[(ranks or "4", lib, s, min(seen[s], 1))].append(float(t[5]))
            seen[s] += 1
libs = [l for l in ("c41", "c42", "c40", "socket") if any(k[1] == l for k in data)]
for ranks in sorted({k[0] for k in data}, reverse=True):
    print(f"== {ranks} ranks: median time (us), first cycle | later cycles")
    print("size".rjust(7), *[f"{l:>15}" for l in libs], "  c42/c41 later  socket/c42 later")
    for s in sorted({k[2] for k in data if k[0] == ranks}):
        m = {(l, c): statistics.median(data[(ranks, l, s, c)]) for l in libs for c in (0, 1) if data[(ranks, l, s, c)]}
        print(str(s).rjust(7), *[f"{m[(l, 0)]:7.1f}|{m[(l, 1)]:7.1f}" for l in libs],
              f"  {m[('c42', 1)] / m[('c41', 1)]:13.2f}  {m[('socket', 1)] / m[('c42', 1)]:16.2f}")
