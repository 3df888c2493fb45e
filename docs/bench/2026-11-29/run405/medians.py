# run405: 4-rank all_reduce of 8 B-2 KiB, medians over three passes of each variant (tcpxr and
# Socket default, each also forced onto the ring and onto the tree), and Socket default's time
# over each tcpxr variant's (above 1: tcpxr faster). Usage: python3 medians.py steps.txt
import re, sys, statistics as st
from collections import defaultdict
t = defaultdict(list)
for line in open(sys.argv[1]):
    m = re.match(r'\[\d+ s\] 4-all_reduce-([\w-]+)-r(\d) rc=0 wrong=0 (.*)', line)
    if not m: continue
    v, p, rest = m.groups()
    for kv in rest.split():
        s, x = kv.split(':'); t[(v, int(s))].append(float(x))
vs = ['tcpxr', 'tcpxr-ring', 'tcpxr-tree', 'socket', 'socket-ring', 'socket-tree']
sizes = sorted({s for _, s in t})
print('size ' + ' '.join(f'{v:>12}' for v in vs) + '   socket/tcpxr')
for s in sizes:
    med = {v: st.median(t[(v, s)]) for v in vs}
    print(f'{s:>5} ' + ' '.join(f'{med[v]:12.2f}' for v in vs) + f'   {med["socket"] / med["tcpxr"]:.2f}')
