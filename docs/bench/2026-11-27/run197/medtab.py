#!/usr/bin/env python3
# medtab.py DIR... : medians over alternations of run_nccl_tests.py outputs (DIR/<op>.<config>.txt,
# out-of-place time, column 6), then per op and size: each config's median and the best Socket
# tuning's median / tcpxr's (above 1: tcpxr faster). Used from run 197 (2026-11-27).
import re, sys, glob, os, statistics as st, collections
t = collections.defaultdict(lambda: collections.defaultdict(list))  # (op, config) -> size -> [us]
for d in sys.argv[1:]:
    for f in glob.glob(os.path.join(d, '*.txt')):
        m = re.match(r'(\w+)\.([\w-]+)\.txt$', os.path.basename(f))
        if not m or m.group(2).endswith('settings'):
            continue
        seen = set()
        for line in open(f, errors='replace'):
            p = line.split()
            if len(p) >= 13 and p[0].isdigit() and p[1].isdigit() and int(p[0]) not in seen:
                seen.add(int(p[0]))
                try: t[(m.group(1), m.group(2))][int(p[0])].append(float(p[5]))
                except ValueError: pass
for op in sorted({o for o, _ in t}):
    cfgs = sorted(c for o, c in t if o == op)
    socks = [c for c in cfgs if c.startswith('socket')]
    others = [c for c in cfgs if not c.startswith('socket')]
    print(f'{op}: median time_us over alternations; ratio = best Socket median / the config\'s median')
    print(f"{'size':>10} " + ' '.join(f'{c:>13}' for c in cfgs) + ''.join(f' {"r:" + c:>16}' for c in others) + '  (n)')
    for s in sorted(t[(op, cfgs[0])]):
        if s == 0: continue
        med = {c: st.median(t[(op, c)][s]) for c in cfgs if t[(op, c)].get(s)}
        best = min((med[c] for c in socks if c in med), default=None)
        rs = ''.join(f' {(best / med[c]) if best and med.get(c) else float("nan"):>16.2f}' for c in others)
        print(f'{s:>10} ' + ' '.join(f'{med.get(c, float("nan")):>13.2f}' for c in cfgs) + rs + f'  ({len(t[(op, cfgs[0])][s])})')
    print()
