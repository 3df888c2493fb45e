# run399: per shape and size, medians of the passes for off (c81 without the variable), pp (with
# it) and Socket default; pp/off (below 1: delayed ACKs faster) and Socket/pp; and the medians of
# each output's TCP segments sent. Usage: python3 medians.py steps.txt
import re, sys, statistics as st
from collections import defaultdict
t = defaultdict(lambda: defaultdict(list)); segs = defaultdict(list)
for line in open(sys.argv[1]):
    m = re.match(r'\[\d+ s\] ((?:bulk-)?\d-\w+?)-(off|pp|socket)-r(\d) rc=0 segs=(\d+) wrong=(\d+) (.*)', line)
    if not m: continue
    shape, v, p, sg, w, rest = m.groups()
    segs[(shape, v)].append(int(sg))
    for kv in rest.split():
        s, x = kv.split(':')
        if int(s) > 0: t[shape][(v, int(s))].append(float(x))
for shape in t:
    vs = [v for v in ('off', 'pp', 'socket') if (shape, v) in segs]
    print(f'{shape}: segments sent ' + ', '.join(f'{v} {st.median(segs[(shape, v)]):.0f}' for v in vs))
    print(f'   size ' + ' '.join(f'{v:>8}' for v in vs) + '   pp/off' + ('  socket/pp' if 'socket' in vs else ''))
    for s in sorted({s for _, s in t[shape]}):
        med = {v: st.median(t[shape][(v, s)]) for v in vs}
        row = f'{s:>8} ' + ' '.join(f'{med[v]:8.2f}' for v in vs) + f'   {med["pp"] / med["off"]:6.2f}'
        if 'socket' in vs: row += f'  {med["socket"] / med["pp"]:9.2f}'
        print(row)
