#!/usr/bin/env python3
"""run392: NCCL's proxy threads' polling around each message, from perf events of every recvfrom
(enter: its socket; exit: its result), every write and every sched_yield.
Per proxy thread, in the middle 80 % of its sends: system calls per operation (recvfrom by
socket, failed or not; sched_yield), and per message arrival the time since the previous poll of
that socket (the poll period the message waited within)."""
import lzma, re, sys, statistics as st
from collections import defaultdict, Counter

LINE = re.compile(r'\s*(.+?)\s+(\d+)/(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+syscalls:(\w+):\s*(.*)')

def pct(xs, p):
    xs = sorted(xs); return xs[min(len(xs)-1, int(p/100*len(xs)))] if xs else float('nan')

for path in sys.argv[1:]:
    ev = defaultdict(list)
    for line in lzma.open(path, 'rt'):
        m = LINE.match(line)
        if not m: continue
        comm, pid, tid, cpu, t, name, rest = m.groups()
        ev[tid].append((float(t) * 1e6, name, rest, pid))
    sends = {tid: [e for e in es if e[1] in ('sys_enter_writev', 'sys_enter_sendto')] for tid, es in ev.items()}
    prox = [tid for tid in ev if len(sends[tid]) > 500]
    print(f'{path}:')
    for tid in sorted(prox):
        es = ev[tid]; s = sends[tid]
        lo, hi = s[len(s)//10][0], s[len(s)*9//10][0]
        n_ops = len(s)*8//10
        win = [e for e in es if lo <= e[0] < hi]
        c = Counter()
        fd_of_enter = None
        polls_by_fd = defaultdict(list)   # fd -> [(exit time, ret)]
        for t, name, rest, pid in win:
            if name == 'sys_enter_recvfrom':
                fd_of_enter = int(re.search(r'fd: (0x[0-9a-f]+)', rest).group(1), 16)
                c[f'recvfrom fd {fd_of_enter}'] += 1
            elif name == 'sys_exit_recvfrom':
                ret = int(rest.strip(), 16)
                if ret >= 1 << 63: ret -= 1 << 64
                if fd_of_enter is not None:
                    polls_by_fd[fd_of_enter].append((t, ret))
                c['recvfrom > 0' if ret > 0 else 'recvfrom EAGAIN' if ret == -11 else f'recvfrom {ret}'] += 1
            elif name == 'sys_enter_sched_yield':
                c['sched_yield'] += 1
            else:
                c[name.replace('sys_enter_', '')] += 1
        span = hi - lo
        print(f'  thread {tid}: {n_ops} sends in {span/1e3:.1f} ms ({span/n_ops:.2f} us a send); per send: ' +
              ', '.join(f'{k} {v/n_ops:.1f}' for k, v in sorted(c.items(), key=lambda kv: -kv[1])))
        for fd, ps in polls_by_fd.items():
            if len(ps) < n_ops: continue
            gaps, waits = [], []
            for i in range(1, len(ps)):
                if ps[i][1] > 0 and ps[i-1][1] <= 0:
                    gaps.append(ps[i][0] - ps[i-1][0])
            periods = [ps[i][0] - ps[i-1][0] for i in range(1, len(ps)) if ps[i-1][1] <= 0 and ps[i][1] <= 0]
            print(f'    fd {fd}: {len(ps)} polls; a failed poll to the next: median {st.median(periods):.2f} us p90 {pct(periods,90):.2f}; '
                  f'the failed poll before an arrival to the arrival: median {st.median(gaps):.2f} p90 {pct(gaps,90):.2f} (n={len(gaps)})')
