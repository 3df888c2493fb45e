"""Runs 420 and 424: medians of the passes per size (from steps.txt) of main (c91), the gathered
header read (c92 in run 420, c95 in run 424: the second argument) and Socket default; gath/main
below 1: the change took less time; socket/gath above 1: tcpxr faster than Socket, with its
per-pass range beside it. `python3 medians.py run420/steps.txt c92`. variants.py (runs 422-423)
reads steps.txt through `times`."""
import re, sys, statistics as st
from collections import defaultdict


def times(path):
    """steps.txt's times: {(ranks, op): {(variant, size): {pass: us}}}."""
    d = defaultdict(lambda: defaultdict(dict))
    for line in open(path):
        m = re.match(r'\[\d+ s\] (\d)-(\w+)-(\w+)-r(\d) rc=0 wrong=(\d+) (.*)', line)
        if not m:
            continue
        np, op, v, p, w, rest = m.groups()
        for kv in rest.split():
            s, t = kv.split(':')
            d[(np, op)][(v, int(s))][p] = float(t)
    return d


def main(path, variant):
    d = times(path)
    for k in d:
        print(f'{k[0]} ranks {k[1]}:     size   main gathered  socket | gath/main socket/gath (per pass)')
        for s in sorted({s for v, s in d[k]}):
            if s == 0:
                continue
            a, b, c = (d[k][(v, s)] for v in ('c91', variant, 'socket'))
            per = [c[p] / b[p] for p in b if p in c]
            ma, mb, mc = (st.median(x.values()) for x in (a, b, c))
            print(f'   {s:>8} {ma:7.2f} {mb:7.2f} {mc:7.2f} | {mb/ma:5.2f} {mc/mb:5.2f} ({min(per):.2f}-{max(per):.2f})')


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else 'c92')
