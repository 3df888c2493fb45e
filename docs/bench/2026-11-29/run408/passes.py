import sys,glob,re,statistics,collections
d=sys.argv[1]; sizes=[int(s) for s in sys.argv[2].split(',')]
res=collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f'{d}/r*/*.txt')):
    if 'settings' in f: continue
    cfg=f.split('/')[-1].rsplit('.txt',1)[0]
    seen=collections.defaultdict(list)
    for line in open(f):
        p=line.split()
        if len(p)>=13 and p[0].isdigit() and p[1].isdigit():
            seen[int(p[0])].append(float(p[5]))
    for s in sizes:
        if s in seen: res[cfg][s].append(statistics.median(seen[s][1:]))
for cfg in res:
    print(cfg.ljust(32), '  '.join(f"{s>>10}K:"+",".join(f"{t:.0f}" for t in res[cfg][s]) for s in sizes))
