#!/usr/bin/env python3
"""run426: every system call of NCCL's ranks during a traced nccl-tests run (perf's
raw_syscalls:sys_enter/sys_exit, system-wide, perf's own calls filtered out), summarised per
operation. Usage: syscalls.py EVENTS.txt[.xz] OPS
OPS: the operations the traced run made (iterations + warm-up), for the per-operation counts.
Per thread of the ranks that made a system call more than OPS/2 times: calls per operation by
name (reads split: returned bytes / EAGAIN), and microseconds inside calls per operation.
Then per rank's message thread (the one that wrote most): messages as seen in calls (a write, or
a read that returned bytes, with none of its kind in the 3 us before: one message), the
middle 80 %: cycle (write to next write), transit (a write to the peer's first arrival after it;
the peer: the rank whose arrivals follow this rank's writes soonest), turnaround (an arrival to
the rank's next write), the failed read before an arrival to that arrival (the poll period the
message waited in), and how long the arriving read took."""
import lzma, re, sys, statistics as st
from collections import defaultdict, Counter
NAMES = {0: 'read', 1: 'write', 7: 'poll', 19: 'readv', 20: 'writev', 44: 'sendto', 45: 'recvfrom',
         46: 'sendmsg', 47: 'recvmsg', 24: 'sched_yield', 202: 'futex', 232: 'epoll_wait',
         281: 'epoll_pwait', 16: 'ioctl', 230: 'clock_nanosleep', 35: 'nanosleep', 271: 'ppoll',
         228: 'clock_gettime', 96: 'gettimeofday', 39: 'getpid', 186: 'gettid', 13: 'rt_sigaction',
         14: 'rt_sigprocmask', 28: 'madvise', 9: 'mmap', 11: 'munmap', 10: 'mprotect', 72: 'fcntl',
         54: 'setsockopt', 55: 'getsockopt', 3: 'close', 257: 'openat', 17: 'pread64', 290: 'eventfd2',
         270: 'pselect6', 23: 'select', 441: 'epoll_pwait2', 435: 'clone3', 56: 'clone', 60: 'exit', 8: 'lseek'}
READS, WRITES = {0, 19, 45, 47}, {1, 20, 44, 46}
LINE = re.compile(r'\s*(.+?)\s+(\d+)/(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+raw_syscalls:sys_(enter|exit):\s+NR (-?\d+) (.*)')
def pct(xs, p):
    xs = sorted(xs); return xs[min(len(xs) - 1, int(p / 100 * len(xs)))] if xs else float('nan')
def show(xs): return f'median {st.median(xs):6.2f} p10 {pct(xs, 10):6.2f} p90 {pct(xs, 90):6.2f} (n={len(xs)})' if xs else 'none'
path, ops = sys.argv[1], int(sys.argv[2])
f = lzma.open(path, 'rt') if path.endswith('.xz') else open(path)
calls = defaultdict(list)  # (pid, tid, comm) -> [(t_enter, t_exit, nr, fd, ret)]
open_ = {}
for line in f:
    m = LINE.match(line)
    if not m: continue
    comm, pid, tid, cpu, t, kind, nr, rest = m.groups()
    t, nr = float(t) * 1e6, int(nr)
    if kind == 'enter':
        fd = rest.strip('() ').split(',')[0]
        open_[tid] = (t, nr, int(fd, 16) if fd else -1, comm, pid)
    else:
        e = open_.pop(tid, None)
        if e and e[1] == nr:
            calls[(e[4], tid, e[3])].append((e[0], t, nr, e[2], int(rest.strip('= '))))
ranks = defaultdict(list)
for k, cs in calls.items():
    if k[2].startswith(('sendrecv_perf', 'all_reduce_perf', 'all_gather_perf', 'reduce_scatter_p', 'ncclProxy', 'tcpxr', 'NCCL', 'cuda', 'async')) or any(c[2] in READS | WRITES for c in cs):
        ranks[k[0]].append(k)
ranks = {p: ks for p, ks in ranks.items() if sum(len(calls[k]) for k in ks) > ops}
print(f'{path}: {len(ranks)} rank processes, {ops} operations each')
msgs = {}
for pid in sorted(ranks, key=int):
    print(f' rank pid {pid}')
    for k in sorted(ranks[pid], key=lambda k: -len(calls[k])):
        cs = calls[k]
        if len(cs) < ops / 2: continue
        c, inside = Counter(), 0.0
        for t0, t1, nr, fd, ret in cs:
            name = NAMES.get(nr, f'nr{nr}')
            if nr in READS: name += ' >0' if ret > 0 else ' EAGAIN' if ret == -11 else f' {ret}'
            c[name] += 1; inside += t1 - t0
        print(f'  {k[2]:<16} tid {k[1]}: {len(cs) / ops:6.1f} calls/op, {inside / ops:6.2f} us inside/op: ' +
              ', '.join(f'{n} {v / ops:.2f}' for n, v in c.most_common(8)))
    # the message thread: the one with the most writes
    k = max(ranks[pid], key=lambda k: sum(1 for c in calls[k] if c[2] in WRITES))
    cs = calls[k]
    writes, arrivals, lastw, lastr, last_fail = [], [], -1e9, -1e9, {}
    waited, took = [], []
    for t0, t1, nr, fd, ret in cs:
        if nr in WRITES:
            if t0 - lastw > 3: writes.append(t0)
            lastw = t0
        elif nr in READS:
            if ret > 0:
                if t1 - lastr > 3:
                    arrivals.append(t1); took.append(t1 - t0)
                    if fd in last_fail: waited.append(t1 - last_fail[fd])
                lastr = t1
            else:
                last_fail[fd] = t1
    msgs[pid] = (writes, arrivals)
    mid = lambda xs: xs[len(xs) // 10: len(xs) * 9 // 10]
    print(f'  messages on {k[2]} tid {k[1]}: {len(writes)} writes, {len(arrivals)} arrivals')
    w = mid(writes)
    print(f'   cycle (write to next write): {show([b - a for a, b in zip(w, w[1:])])}')
    turn, j = [], 0
    for a in mid(arrivals):
        while j < len(writes) and writes[j] < a: j += 1
        if j < len(writes): turn.append(writes[j] - a)
    print(f'   turnaround (arrival to next write): {show(turn)}')
    print(f'   the arriving read took: {show(mid(took))}')
    print(f'   the failed read of that socket before an arrival, to the arrival: {show(mid(waited))}')
import bisect
for a in sorted(msgs, key=int):
    best = None
    for b in msgs:
        if b == a: continue
        arr = msgs[b][1]
        tr = []
        for w in msgs[a][0][len(msgs[a][0]) // 10: len(msgs[a][0]) * 9 // 10]:
            i = bisect.bisect_right(arr, w)
            if i < len(arr): tr.append(arr[i] - w)
        if tr and (best is None or st.median(tr) < st.median(best[1])): best = (b, tr)
    if best: print(f' transit {a} -> {best[0]} (write to the peer\'s next arrival): {show(best[1])}')
