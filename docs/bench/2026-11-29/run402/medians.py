# runs 401-402: per shape and size, the median over the passes of each library's time, and the
# change's (c83) over main's (c80); the host-buffer shape is the control (the same code in both).
# Usage: python3 medians.py steps.txt [steps.txt ...]
import re, sys, statistics as st
from collections import defaultdict
t = defaultdict(lambda: defaultdict(list))
for path in sys.argv[1:]:
    for line in open(path):
        m = re.match(r'\[\d+ s\] (\w+-\d-\w+?)-(c80|c83)-r(\d) rc=0 wrong=0 (.*)', line)
        if not m: continue
        shape, c, p, rest = m.groups()
        for kv in rest.split():
            s, x = kv.split(':'); t[shape][(c, int(s))].append(float(x))
for shape in t:
    n = len(t[shape][('c80', 8388608)])
    print(f'{shape} ({n} passes): size  main  VMM  VMM/main  (per pass)')
    for s in sorted({s for _, s in t[shape]}):
        a, b = t[shape][('c80', s)], t[shape][('c83', s)]
        per = ' '.join(f'{y / x:.2f}' for x, y in zip(a, b))
        print(f'  {s >> 20:>4} MiB {st.median(a):9.1f} {st.median(b):9.1f}  {st.median(b) / st.median(a):5.2f}  ({per})')
