#!/usr/bin/env python3
"""run394: per shape and size, main's (c78) and the change's (c79) median time over the four
passes, their ratio (the change's time over main's) and each pass's ratio.
Usage: medians.py steps.txt (tar -xJOf docs/bench/2026-11-29/raw.tar.xz run394/steps.txt)."""
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
        d[(np, op)][(v, int(s))].append(float(t))
for (np, op), t in d.items():
    print(f'{np} ranks {op}: size, main, exact reads (us, medians), exact / main, per pass')
    for s in sorted({s for v, s in t}):
        a, b = t[('c78', s)], t[('c79', s)]
        print(f'  {s:>8} {st.median(a):8.2f} {st.median(b):8.2f} {st.median(b) / st.median(a):.3f} '
              f'{[round(y / x, 2) for x, y in zip(a, b)]}')
