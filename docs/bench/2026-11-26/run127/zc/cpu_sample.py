#!/usr/bin/env python3
"""Sample every thread's CPU time of the processes whose command line matches a pattern (and the
whole host's from /proc/stat) until the command given after -- exits; print cores busy per thread
name over the sampled window (from each thread's first to last sample)."""
import os, re, subprocess, sys, time
pat = re.compile(sys.argv[1]); cmd = sys.argv[sys.argv.index("--") + 1:]
hz = os.sysconf("SC_CLK_TCK"); first, last = {}, {}
def host():
    f = open("/proc/stat").readline().split()[1:]; v = list(map(int, f)); return sum(v) - v[3] - v[4], sum(v)
def sample(t):
    for pid in os.listdir("/proc"):
        if not pid.isdigit(): continue
        try: cl = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
        except OSError: continue
        if not pat.search(cl): continue
        name = os.path.basename(cl.split(" ")[0])
        try: tids = os.listdir(f"/proc/{pid}/task")
        except OSError: continue
        for tid in tids:
            try: s = open(f"/proc/{pid}/task/{tid}/stat").read()
            except OSError: continue
            comm = s[s.index("(") + 1:s.rindex(")")]; f = s[s.rindex(")") + 2:].split()
            k = (name, pid, tid, comm); v = (t, (int(f[11]) + int(f[12])) / hz)
            first.setdefault(k, v); last[k] = v
p = subprocess.Popen(cmd); h0 = host(); t0 = time.time()
while p.poll() is None:
    sample(time.time()); time.sleep(0.5)
h1 = host(); dt = time.time() - t0
groups = {}
for k, (t1, c1) in last.items():
    t0k, c0 = first[k]
    if t1 - t0k < 2: continue
    g = (k[0], re.sub(r"\d+$", "N", k[3])); n, c, w = groups.get(g, (0, 0.0, 0.0))
    groups[g] = (n + 1, c + (c1 - c0), max(w, t1 - t0k))
print(f"host: {(h1[0]-h0[0])/(h1[1]-h0[1])*os.cpu_count():.2f} of {os.cpu_count()} cores busy over {dt:.1f} s")
for (proc, th), (n, c, w) in sorted(groups.items(), key=lambda x: -x[1][1]):
    if c / w >= 0.02: print(f"{proc:28s} {th:24s} threads={n:3d} cores busy={c / w:6.2f} cpu s={c:7.2f} over {w:5.1f} s")
sys.exit(p.returncode)
