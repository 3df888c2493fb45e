#!/usr/bin/env python3
"""tcpctr.py snap FILE | tcpctr.py diff FILE: the kernel's TCP counters (/proc/net/netstat and
/proc/net/snmp) saved, or the ones that moved since FILE, for the counters that say a segment
was dropped, pruned, probed or retransmitted."""
import sys
KEEP = ("TCPLossProbes", "TCPLossProbeRecovery", "TCPRcvQDrop", "PruneCalled", "RcvPruned",
        "TCPRcvCollapsed", "TCPBacklogDrop", "RetransSegs", "TCPTimeouts", "TCPSpuriousRTOs",
        "TCPOFOQueue", "TCPOFODrop", "TCPZeroWindowDrop", "TCPWantZeroWindowAdv",
        "TCPToZeroWindowAdv", "TCPFromZeroWindowAdv", "TCPDSACKRecv", "TCPMemoryPressures",
        "TCPFastRetrans", "TCPSlowStartRetrans", "TCPLostRetransmit")
def read():
    out = {}
    for path in ("/proc/net/netstat", "/proc/net/snmp"):
        lines = open(path).read().splitlines()
        for head, vals in zip(lines[0::2], lines[1::2]):
            names, nums = head.split()[1:], vals.split()[1:]
            for n, v in zip(names, nums):
                if n in KEEP:
                    out[n] = int(v)
    return out
if sys.argv[1] == "snap":
    with open(sys.argv[2], "w") as f:
        f.write(repr(read()))
else:
    before = eval(open(sys.argv[2]).read())
    now = read()
    print(" ".join(f"{k}={now[k] - before.get(k, 0)}" for k in KEEP if k in now and now[k] != before.get(k, 0)) or "none moved")
