"""Run 430: per shape and size, tcpxr's median time of the passes against the best Socket
tuning's (the lowest of the four medians): best/tcpxr (above 1: tcpxr faster), with the tuning
that won and the per-pass range of best-of-that-pass / tcpxr. `python3 best.py steps.txt c99`."""
import os, statistics as st, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'run420'))
from medians import times  # noqa: E402

SOCKS = ['socket', 's1x1', 's2x2', 's4x4']


def main(path, tx):
    d = times(path)
    for k in d:
        print(f'{k[0]} ranks {k[1]}:   size    tcpxr  best socket (which) | best/tcpxr (per pass)')
        for s in sorted({s for v, s in d[k]}):
            if s == 0 or (tx, s) not in d[k]:
                continue
            t = d[k][(tx, s)]
            meds = {v: st.median(d[k][(v, s)].values()) for v in SOCKS if (v, s) in d[k]}
            bv = min(meds, key=meds.get)
            per = [min(d[k][(v, s)][p] for v in SOCKS if p in d[k][(v, s)]) / t[p] for p in t]
            print(f'  {s:>9} {st.median(t.values()):8.2f} {meds[bv]:8.2f} {bv:>8} | {meds[bv]/st.median(t.values()):5.2f} ({min(per):.2f}-{max(per):.2f})')


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
