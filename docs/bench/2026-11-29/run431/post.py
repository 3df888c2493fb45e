#!/usr/bin/env python3
"""Run 431, after the run: per send step, its buffer's post relative to the previous receive done,
the kernel's data after the post, and both relative to the kernel having consumed the previous
receive (RecvGpuWait ends, as the proxy saw it); medians (p10, p90) in us. Usage: post.py
DUMP.json (.xz too). post.txt is its output."""
import json, lzma, sys, statistics as st, bisect
from collections import defaultdict
def pct(xs,p):
    xs=sorted(xs); return xs[min(len(xs)-1,int(p/100*len(xs)))]
for path in sys.argv[1:]:
    ev = defaultdict(dict)
    for line in (lzma.open(path, 'rt') if path.endswith('.xz') else open(path)):
        line=line.strip().rstrip(',')
        if not line.startswith('{'): continue
        try: e=json.loads(line)
        except Exception: continue
        ev[(e['name'],e['id'])][e['ph']]=e['ts']
    sends=sorted((be['b'],be['e']) for (n,i),be in ev.items() if n=='SendGpuWait' and 'b' in be and 'e' in be)
    rdone=sorted(be['e'] for (n,i),be in ev.items() if n=='RecvWait' and 'e' in be)
    rgpu=sorted(be['e'] for (n,i),be in ev.items() if n=='RecvGpuWait' and 'e' in be)  # GPU consumed
    post_after_rdone=[]; data_after_post=[]; data_after_consumed=[]; post_after_consumed=[]
    for b,e in sends:
        i=bisect.bisect_right(rdone,e)-1
        if i<0: continue
        post_after_rdone.append(b-rdone[i]); data_after_post.append(e-b)
        j=bisect.bisect_right(rgpu,e)-1
        if j>=0: data_after_consumed.append(e-rgpu[j]); post_after_consumed.append(b-rgpu[j])
    m=lambda xs: f'{st.median(xs):7.2f} (p10 {pct(xs,10):6.2f} p90 {pct(xs,90):6.2f})'
    print(path.split('/')[-2], path.split('_')[-1][:1], 'post-recvdone', m(post_after_rdone), '| data-post', m(data_after_post), '| data-consumed', m(data_after_consumed), '| post-consumed', m(post_after_consumed))
