#!/usr/bin/env python3
"""Run 426, 2 ranks: both message threads' system calls around three messages, on one time axis
(0: the first rank's write; a run of sched_yield shown once), the second rank indented. Usage:
around.py EVENTS.txt.xz TID_A,TID_B FIRST_WRITE. around-*.txt are its outputs."""
import os, sys
NAMES={19:'readv',20:'writev',44:'sendto',45:'recvfrom',24:'yield',202:'futex'}
path, tids = sys.argv[1], sys.argv[2].split(','); start=int(sys.argv[3])
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from detail import load  # noqa: E402
calls = {tid: [(c[0], c[1], c[2], f'{c[3]:x}', c[4], tid) for c in cs] for tid, cs in load(path, tids).items()}
allc = sorted(calls[tids[0]] + calls[tids[1]])
# collapse runs of yields
ws = [i for i, c in enumerate(allc) if c[2] in (20, 44) and c[5] == tids[0]]
for wi in ws[start:start+3]:
    t0 = allc[wi][0]
    print('---')
    prev=None
    for c in allc[wi-30:wi+40]:
        name = NAMES.get(c[2], str(c[2]))
        if name=='yield' and prev==(c[5],'yield'): continue
        prev=(c[5],name)
        ind = '' if c[5]==tids[0] else ' '*40
        print(f'{ind}{c[0]-t0:8.2f} {c[1]-c[0]:5.2f} {name} fd {c[3]} = {c[4]}')
