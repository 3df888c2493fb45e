"""Runs 427-429: per shape and size, each variant's median time of the passes (from steps.txt) and
its ratio to the first variant named (above 1: slower than it), with the per-pass range.
`python3 medians.py steps.txt socket c97 sock8 c97ch2 c97ck`. run430/best.py reads steps.txt
through `times`, run 420's parser."""
import os, statistics as st, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'run420'))
from medians import times  # noqa: E402  (run 420's parser of steps.txt)


def main(path, vs):
    d = times(path)
    for k in d:
        print(f'{k[0]} ranks {k[1]}: ' + ' '.join(f'{v:>8}' for v in vs) + ' | ' + ' '.join(f'{v + "/" + vs[0]:>14}' for v in vs[1:]))
        for s in sorted({s for v, s in d[k]}):
            ts = [d[k][(v, s)] for v in vs]
            if not all(ts):
                continue
            med = [st.median(t.values()) for t in ts]
            rat = []
            for t, m in zip(ts[1:], med[1:]):
                per = [t[p] / ts[0][p] for p in t if p in ts[0]]
                rat.append(f'{m/med[0]:5.2f} ({min(per):.2f}-{max(per):.2f})')
            print(f'  {s:>7} ' + ' '.join(f'{m:8.2f}' for m in med) + ' | ' + ' '.join(f'{r:>14}' for r in rat))


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2:])
