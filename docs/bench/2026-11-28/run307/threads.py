#!/usr/bin/env python3
"""Per-thread CPU time and context switches of every process named all_reduce_perf over a window:
threads.py WAIT_S WINDOW_S. One line per thread that ran: pid, name, cpu ms, voluntary and
involuntary switches in the window."""
import os, sys, time, collections
def snap():
    out = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit(): continue
        try:
            if open(f"/proc/{pid}/comm").read().strip() != "all_reduce_perf": continue
            for tid in os.listdir(f"/proc/{pid}/task"):
                base = f"/proc/{pid}/task/{tid}"
                name = open(f"{base}/comm").read().strip()
                st = open(f"{base}/stat").read().rsplit(")", 1)[1].split()
                cpu = (int(st[11]) + int(st[12])) * 1000 // os.sysconf("SC_CLK_TCK")
                sw = {l.split(":")[0]: int(l.split()[1]) for l in open(f"{base}/status") if "ctxt_switches" in l}
                out[(pid, tid)] = (name, cpu, sw["voluntary_ctxt_switches"], sw["nonvoluntary_ctxt_switches"])
        except OSError:
            pass
    return out
time.sleep(float(sys.argv[1])); a = snap(); time.sleep(float(sys.argv[2])); b = snap()
agg = collections.defaultdict(lambda: [0, 0, 0, 0])
for k, (name, cpu, v, nv) in b.items():
    if k not in a: continue
    _, cpu0, v0, nv0 = a[k]
    if cpu - cpu0 or v - v0 or nv - nv0:
        print(f"{k[0]} {k[1]} {name:16} cpu {cpu-cpu0:6d} ms  vol {v-v0:7d}  invol {nv-nv0:6d}")
    g = agg[(k[0], name.rstrip('0123456789'))]; g[0] += cpu - cpu0; g[1] += v - v0; g[2] += nv - nv0; g[3] += 1
print("-- per process and thread kind: cpu ms, voluntary, involuntary switches, threads")
for (pid, name), (c, v, nv, n) in sorted(agg.items()):
    print(f"{pid} {name:16} cpu {c:6d} ms  vol {v:7d}  invol {nv:6d}  threads {n}")
