#!/bin/bash
# CPU host (2 cores), 2026-11-27, twenty-eighth session: control connections read only when the
# process's edge-triggered readiness set reports them (ctrl-readiness.patch on 887615e, experiment)
# against 887615e itself: tcpxr-bench latency --ahead 8 and the 2-rank ring, alternated three
# times, and the ring's syscall counts (perf stat). OLD and NEW: the two tcpxr-bench binaries.
for r in 1 2 3; do for v in old new; do b=$OLD; [ $v = new ] && b=$NEW
  echo "$v latency: $($b latency --ahead 8 --iters 20000 2>&1 | grep -E '^ *tcpxr:')"
  echo "$v ring: $($b ring --ranks 2 --size 512K --channels 2 --seconds 2 --no-baseline 2>&1 | grep -E 'tcpxr +all')"
done; done
for v in old new; do b=$OLD; [ $v = new ] && b=$NEW
  echo "$v syscalls:"; perf stat -e syscalls:sys_enter_recvfrom -e syscalls:sys_enter_epoll_wait -- $b ring --ranks 2 --size 512K --channels 2 --seconds 2 --no-baseline 2>&1 | grep -E 'tcpxr +all|syscalls'
done
