# run404: per shape and size, the median over the passes of each library's time (us), and the
# change's (c84, VMM host pages) over main's (c80). Usage: python3 medians.py steps.txt
import re, sys, statistics as st
from collections import defaultdict
t = defaultdict(lambda: defaultdict(list))
for line in open(sys.argv[1]):
    m = re.match(r'\[\d+ s\] (\w+-\d-\w+?)-(c80|c84)-r(\d) rc=0 wrong=0 (.*)', line)
    if not m: continue
    shape, c, p, rest = m.groups()
    for kv in rest.split():
        s, x = kv.split(':'); t[shape][(c, int(s))].append(float(x))
for shape in t:
    sizes = sorted({s for _, s in t[shape]})
    print(f'{shape} ({len(t[shape][("c80", sizes[0])])} passes): size  main  VMM  VMM/main  (per pass)')
    for s in sizes:
        a, b = t[shape][('c80', s)], t[shape][('c84', s)]
        per = ' '.join(f'{y / x:.2f}' for x, y in zip(a, b))
        print(f'  {s:>8} {st.median(a):8.2f} {st.median(b):8.2f}  {st.median(b) / st.median(a):5.2f}  ({per})')
