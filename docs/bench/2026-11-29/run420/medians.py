"""Runs 420 and 424: medians of the passes per size (from steps.txt) of main (c91), the gathered
header read (c92 in run 420, c95 in run 424: the second argument) and Socket default; gath/main
below 1: the change took less time; socket/gath above 1: tcpxr faster than Socket, with its
per-pass range beside it. `python3 medians.py run420/steps.txt c92`."""
import re, sys, statistics as st
VARIANT = sys.argv[2] if len(sys.argv) > 2 else 'c92'
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
for k in d:
    print(f'{k[0]} ranks {k[1]}:     size   main gathered  socket | gath/main socket/gath (per pass)')
    for s in sorted({s for v, s in d[k]}):
        if s == 0:
            continue
        a, b, c = (d[k][(v, s)] for v in ('c91', VARIANT, 'socket'))
        per = [x / y for x, y in zip(c, b)]
        print(f'   {s:>8} {st.median(a):7.2f} {st.median(b):7.2f} {st.median(c):7.2f} | {st.median(b)/st.median(a):5.2f}'
              f' {st.median(c)/st.median(b):5.2f} ({min(per):.2f}-{max(per):.2f})')
