#!/usr/bin/env python3
"""Run 431, after the run: per send op in a rank's profiler dump (P2P event, its proxy op and its
step, in the order the example plugin prints them), when the host enqueued it, the proxy
scheduled it and began its progress, posted its buffer to the kernel (SendGpuWait begins) and saw
the kernel's data (SendGpuWait ends), each relative to the rank's previous receive done (RecvWait
ends); medians [p10, p90] in us. Usage: ops.py DUMP.json (.xz too). ops.txt is its output."""
import json, lzma, sys, statistics as st
def pct(xs,p):
    xs=sorted(xs); return xs[min(len(xs)-1,int(p/100*len(xs)))]
m=lambda xs: f'{st.median(xs):7.2f} [{pct(xs,10):6.2f},{pct(xs,90):6.2f}]' if xs else '-'
for path in sys.argv[1:]:
    sends, recvs, cur = [], [], None
    for line in (lzma.open(path, 'rt') if path.endswith('.xz') else open(path)):
        line=line.strip().rstrip(',')
        if not line.startswith('{'): continue
        try: e=json.loads(line)
        except Exception: continue
        n, ph = e['name'], e['ph']
        if e.get('cat')=='P2P' and ph=='b':
            cur={'kind':n,'host':e['ts']}; (sends if n=='Send' else recvs).append(cur)
        elif cur is not None:
            cur.setdefault((n,ph), e['ts'])
    # send op k: host enqueue, schedule, progress start, post (SendGpuWait b), data seen (SendGpuWait e)
    sends=[s for s in sends if ('SendGpuWait','e') in s]
    recvs=[r for r in recvs if ('RecvWait','e') in r]
    sends.sort(key=lambda s:s[('SendGpuWait','e')]); recvs.sort(key=lambda r:r[('RecvWait','e')])
    import bisect
    rd=[r[('RecvWait','e')] for r in recvs]; rc=[r.get(('RecvGpuWait','e'),0) for r in recvs]
    a,b,c,d,f=[],[],[],[],[]
    for s in sends:
        data=s[('SendGpuWait','e')]
        i=bisect.bisect_right(rd,data)-1
        if i<0: continue
        t0=rd[i]   # the previous receive done
        a.append(s['host']-t0); b.append(s[('ScheduleSend','b')]-t0); c.append(s[('ProgressSend','b')]-t0); d.append(s[('SendGpuWait','b')]-t0); f.append(data-t0)
    print(path.split('/')[-2], path.split('_')[-1][:1], 'rel. to previous receive done: host', m(a), '| sched', m(b), '| progress', m(c), '| post', m(d), '| data', m(f))
