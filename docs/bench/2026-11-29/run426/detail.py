#!/usr/bin/env python3
"""Run 426, 2 ranks: per message of a traced sendrecv (syscalls.py's raw_syscalls events), the
sender's write and the receiver's reads: write duration, write to the arriving read's exit, the
arriving read's duration, the receiver's idle time before it; then, summing reads to the write's
size, when the message was wholly read and how long after that the receiver wrote its own next
message. Usage: detail.py EVENTS.txt.xz TID_A,TID_B (the two ranks' message threads, from
syscalls.py's output). The events files were not kept (10 MB); detail-*.txt are its outputs."""
import lzma, re, sys, statistics as st, bisect
from collections import defaultdict
LINE = re.compile(r'\s*(.+?)\s+(\d+)/(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+raw_syscalls:sys_(enter|exit):\s+NR (-?\d+) (.*)')
READS, WRITES = {0, 19, 45, 47}, {1, 20, 44, 46}
def pct(xs, p):
    xs = sorted(xs); return xs[min(len(xs)-1, int(p/100*len(xs)))]
def show(n, xs): print(f'   {n:<48} median {st.median(xs):6.2f} p10 {pct(xs,10):6.2f} p90 {pct(xs,90):6.2f} mean {st.mean(xs):6.2f} (n={len(xs)})')
def load(path, tids):
    """{tid: [(enter us, exit us, syscall nr, fd, result, third argument, cpu at enter, cpu at exit)]}
    of the threads `tids`, from a perf script of raw_syscalls enter and exit events."""
    calls = defaultdict(list); open_ = {}
    for line in lzma.open(path, 'rt'):
        m = LINE.match(line)
        if not m or m.group(3) not in tids: continue
        comm, pid, tid, cpu, t, kind, nr, rest = m.groups(); t = float(t)*1e6; nr = int(nr)
        if kind == 'enter':
            a = rest.strip('() ').split(','); open_[tid] = (t, nr, int(a[0], 16), int(a[2], 16) if len(a) > 2 else 0, int(cpu))
        else:
            e = open_.pop(tid, None)
            if e and e[1] == nr: calls[tid].append((e[0], t, nr, e[2], int(rest.strip('= ')), e[3], e[4], int(cpu)))
    return calls
def main():
    path, tids = sys.argv[1], sys.argv[2].split(',')
    calls = load(path, tids)
    # messages: a write; its arrival on the other tid: the first read with ret>0 whose exit follows the write's enter
    A, B = tids
    for src, dst in ((A, B), (B, A)):
        ws = [c for c in calls[src] if c[2] in WRITES]
        rs = [c for c in calls[dst] if c[2] in READS and c[4] > 0]
        fails = [c for c in calls[dst] if c[2] in READS and c[4] <= 0]
        fail_enters = [c[0] for c in fails]
        rex = [c[1] for c in rs]
        n = len(ws); ws = ws[n//10: n*9//10]
        wdur, tr, gap_exit_to_enter, rdur, polls_after, cpu_same, last_fail_to_enter = [], [], [], [], [], 0, []
        for w in ws:
            i = bisect.bisect_right(rex, w[0])
            if i >= len(rs): continue
            r = rs[i]
            wdur.append(w[1]-w[0]); tr.append(r[1]-w[0]); rdur.append(r[1]-r[0]); gap_exit_to_enter.append(r[0]-w[1])
            # failed polls of the reader that ENTERED after the write's EXIT (data should have been there)
            j0 = bisect.bisect_right(fail_enters, w[1]); j1 = bisect.bisect_left(fail_enters, r[0])
            polls_after.append(j1 - j0)
            k = bisect.bisect_left(fail_enters, r[0]) - 1
            if k >= 0: last_fail_to_enter.append(r[0] - fails[k][1])
            cpu_same += w[7] == r[7]
        print(f' {src} -> {dst}: {len(tr)} messages; write bytes {st.median([w[4] for w in ws])}, read bytes {st.median([r[4] for r in rs])}')
        show('write duration (enter to exit)', wdur)
        show('transit (write enter to arriving read exit)', tr)
        show('write exit to arriving read enter', gap_exit_to_enter)
        show('arriving read duration', rdur)
        show('reader idle before it: last failed read exit to it', last_fail_to_enter)
        print(f'   failed reads entered after the write returned: {sum(polls_after)/len(polls_after):.2f} a message; messages with any: {sum(1 for p in polls_after if p)/len(polls_after):.2f}')
    print(' complete messages (reads summed to the write size):')
    for src, dst in ((A, B), (B, A)):
        ws = [c for c in calls[src] if c[2] in WRITES]
        size = st.median([w[4] for w in ws])
        done, acc, first = [], 0, None
        for c in calls[dst]:
            if c[2] in READS and c[4] > 0:
                if acc == 0: first = c
                acc += c[4]
                while acc >= size:
                    done.append((first[0], c[1], c[1]-c[0])); acc -= size
        dex = [d[1] for d in done]
        own_w = [c[0] for c in calls[dst] if c[2] in WRITES]
        n = len(ws); tr, turn, last = [], [], []
        for w in ws[n//10: n*9//10]:
            i = bisect.bisect_right(dex, w[0])
            if i >= len(done): continue
            tr.append(done[i][1] - w[0]); last.append(done[i][2])
            k = bisect.bisect_right(own_w, done[i][1])
            if k < len(own_w): turn.append(own_w[k] - done[i][1])
        show(f'{src}->{dst} write enter to message read whole', tr)
        show(f'{dst}: the last read of it took', last)
        show(f'{dst}: message whole to {dst}\'s next write', turn)


if __name__ == '__main__':
    main()
