#!/usr/bin/env python3
"""run397, 2 ranks: when a message's payload can be in NCCL's buffer, from the sender's write
(enter), as run392/landing.py, for three libraries:
- tcpxr before exact reads: one 48-byte read of header and payload into tcpxr's buffer, the
  payload copied after the read returns: landing = that read's exit;
- tcpxr with exact reads: a 16-byte header read, then the payload read straight into NCCL's
  buffer: landing = the payload read's enter (its copy comes first in the call, the ACK after);
- Socket: a 4-byte size read, then the payload read: landing = the payload read's enter.
Also each read size's median duration.
Usage: landing397.py EVENTS.txt.xz ..."""
import lzma, re, sys, statistics as st
from collections import defaultdict
LINE = re.compile(r'\s*(.+?)\s+(\d+)/(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+syscalls:(\w+):\s*(.*)')
def pct(xs, p):
    xs = sorted(xs); return xs[min(len(xs)-1, int(p/100*len(xs)))]
def show(name, xs): return f'{name}: median {st.median(xs):5.2f} p10 {pct(xs,10):5.2f} p90 {pct(xs,90):5.2f} mean {st.mean(xs):5.2f} us'
for path in sys.argv[1:]:
    ev = defaultdict(list)
    for line in lzma.open(path, 'rt'):
        m = LINE.match(line)
        if m:
            comm, pid, tid, cpu, t, name, rest = m.groups()
            ev[tid].append((float(t) * 1e6, name, rest))
    prox = sorted(t for t, es in ev.items() if sum(1 for e in es if e[1] in ('sys_enter_writev', 'sys_enter_sendto')) > 500)
    writes, lands, durs = {}, {}, defaultdict(list)
    for tid in prox:
        es = ev[tid]
        writes[tid] = [e[0] for e in es if e[1] in ('sys_enter_writev', 'sys_enter_sendto')]
        land, enter, expect_payload = [], None, False
        for t, name, rest in es:
            if name == 'sys_enter_recvfrom': enter = t
            elif name == 'sys_exit_recvfrom':
                ret = int(rest.split()[0], 16)
                if ret >= 1 << 63: continue
                durs[ret].append(t - enter)
                if ret in (4, 16): expect_payload = True      # a size or header: the payload read is next
                elif expect_payload: land.append(enter); expect_payload = False
                elif ret % 0x30 == 0: land += [t] * (ret // 0x30)
        lands[tid] = land
    print(path + ': reads by size: ' + '; '.join(f'{k} B {len(v)}x median {st.median(v):.2f} us' for k, v in sorted(durs.items()) if len(v) > 100))
    for src, dst in ((prox[0], prox[1]), (prox[1], prox[0])):
        w, l = writes[src], lands[dst]
        n = min(len(w), len(l))
        print(f'  {src}->{dst} ({len(w)} writes, {len(l)} landings): ' + show('payload can land after the write', [l[i] - w[i] for i in range(n // 10, n * 9 // 10)]))
