"""Runs 422-423: each variant's median over the passes per size, and its time over main's (c91)
median; per pass, the variant's time over main's in the same pass. Reads steps.txt through
medians.py's `times`."""
import statistics as st
import sys
from medians import times

d = times(sys.argv[1])
variants = sorted({v for k in d for v, _ in d[k]})
others = [v for v in variants if v != 'c91']
for k in d:
    print(f'{k[0]} ranks {k[1]}:  size ' + ' '.join(f'{v:>7}' for v in variants) + '  | ' +
          '  '.join(f'{v}/c91 (per pass)' for v in others))
    for s in sorted({s for v, s in d[k]}):
        med = {v: st.median(d[k][(v, s)].values()) for v in variants}
        cols = []
        for v in others:
            per = [d[k][(v, s)][p] / d[k][('c91', s)][p] for p in d[k][(v, s)] if p in d[k][('c91', s)]]
            cols.append(f'{med[v] / med["c91"]:.2f} ({min(per):.2f}-{max(per):.2f})')
        print(f'   {s:>6} ' + ' '.join(f'{med[v]:7.2f}' for v in variants) + '  | ' + '  '.join(cols))
