import re,sys,statistics as st
from collections import defaultdict
d=defaultdict(lambda: defaultdict(list))
for line in open(sys.argv[1]):
    m=re.match(r'\[\d+ s\] (\d)-(\w+)-(\w+)-r(\d) rc=0 wrong=(\d+) (.*)',line)
    if not m: continue
    np,op,v,p,w,rest=m.groups()
    for kv in rest.split():
        s,t=kv.split(':'); d[(np,op)][(v,int(s))].append(float(t))
for k in d:
    print(f'{k[0]} ranks {k[1]}:  size  main  exact  socket | exact/main  socket/main socket/exact (medians of 3)')
    sizes=sorted({s for v,s in d[k]})
    for s in sizes:
        if s==0: continue
        a=st.median(d[k][('c78',s)]); b=st.median(d[k][('c79',s)]); c=st.median(d[k][('socket',s)])
        print(f'   {s:>8} {a:7.2f} {b:7.2f} {c:7.2f} | {b/a:5.2f} {c/a:5.2f} {c/b:5.2f}')
