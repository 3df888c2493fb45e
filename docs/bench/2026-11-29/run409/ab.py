import sys,glob,statistics,collections
d=sys.argv[1]; new,old=sys.argv[2],sys.argv[3]; peers=sys.argv[4].split(',')
res=collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f'{d}/r*/*.txt')):
    if 'settings' in f: continue
    op,cfg=f.split('/')[-1].rsplit('.txt',1)[0].split('.',1)
    seen=collections.defaultdict(list)
    for line in open(f):
        p=line.split()
        if len(p)>=13 and p[0].isdigit() and p[1].isdigit(): seen[int(p[0])].append(float(p[5]))
    for s,v in seen.items(): res[(op,cfg)][s].append(statistics.median(v[1:]))
for op in sorted({k[0] for k in res}):
    print(f"{op}: size  new  main  new/main (per pass)  best-peer  new/peer main/peer")
    for s in sorted(res[(op,new)]):
        n=statistics.median(res[(op,new)][s]); m=statistics.median(res[(op,old)][s])
        pp=[(statistics.median(res[(op,p)][s]),p) for p in peers]; b=min(pp)
        per=",".join(f"{a/c:.2f}" for a,c in zip(res[(op,new)][s],res[(op,old)][s]))
        print(f"  {s>>10:5}K {n:7.1f} {m:7.1f}  {n/m:.2f} ({per})  {b[0]:7.1f} {b[1]:10}  {b[0]/n:.2f} {b[0]/m:.2f}")
