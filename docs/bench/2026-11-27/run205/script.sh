#!/bin/bash
# run205 (a 2-GPU host, 32 cores; 2026-11-27, twenty-third session): where a core of tcpxr's bulk
# ring goes. Run 180: 2 ranks, 8 channels, 512 KiB: tcpxr 41.8 GB/s on 17.8 cores against plain TCP
# x16's 122.9 on 46.9 (2.35 against 2.62 GB/s a core); x8 81.9 on 24.5 (3.34 a core). Here the same
# rings, then each under a system-wide `perf record` (perf 6.1 of the CPU host, carried in
# dist/prof with its libraries; tcpxr-bench with symbols, e4db58c), reported per process and
# thread and per symbol; and the rings again with the pool at 16 threads, all spinning and none.
cd "$(dirname "$0")/.."; A=/tmp/run205; source dist/common.sh
trap "rm -f $A/*.data; tar cJf $R/run205.tar.xz -C /tmp run205" EXIT
PROF=$PWD/dist/prof; PERF="env LD_LIBRARY_PATH=$PROF/lib $PROF/perf"; B=$PROF/tcpxr-bench-sym
{ date -u; uname -r; nproc; cat dist/new/commit.txt; uptime; cat /proc/sys/kernel/perf_event_paranoid; $PERF --version
  lscpu | grep -E '^(Model name|Thread|Core|Socket|NUMA node\(s\)|Hypervisor)'; } > $A/machine.txt 2>&1
# ring NAME "K=V ..." [bench options]
ring(){ local name=$1 envs=$2; shift 2; timeout 60 env $envs $B ring --ranks 2 --channels 8 --size 512K --seconds 3 "$@" > $A/$name.txt 2>&1
  el "$name rc=$? $(grep -E '^ +(tcpxr|tcp x[0-9]+) +all' $A/$name.txt | tr -s ' ' | paste -sd';')"; }
ring base "" --tcp-connections 8,16
ring t16s16 "NCCL_TCPXR_IO_THREADS=16 NCCL_TCPXR_IO_SPIN_THREADS=16" --no-baseline
ring t8s8 "NCCL_TCPXR_IO_SPIN_THREADS=8" --no-baseline
ring t16s1 "NCCL_TCPXR_IO_THREADS=16 NCCL_TCPXR_IO_SPIN_THREADS=1" --no-baseline
ring t8spin0 "NCCL_TCPXR_IO_SPIN_US=0" --no-baseline
prof(){ local name=$1; shift
  $PERF record -F 1999 -a -g -q -o $A/$name.data -- $B ring --ranks 2 --channels 8 --size 512K --seconds 3 "$@" > $A/$name-ring.txt 2>&1
  el "$name perf rc=$? $(grep -E '^ +(tcpxr|tcp x[0-9]+) +all' $A/$name-ring.txt | tr -s ' ' | paste -sd';')"
  $PERF report -i $A/$name.data --stdio --no-children --sort pid,comm -g none --percent-limit 0.3 > $A/$name.pid.txt 2>&1
  $PERF report -i $A/$name.data --stdio --no-children --sort pid,comm,dso,sym -g none --percent-limit 0.15 > $A/$name.sym.txt 2>&1
  $PERF report -i $A/$name.data --stdio --no-children --sort sym -g caller,0.5,callee --percent-limit 1.5 > $A/$name.callers.txt 2>&1
  xz -k $A/$name.sym.txt 2>/dev/null; el "$name reports $(wc -c < $A/$name.sym.txt) B"; }
prof tcpxr --no-baseline
prof tcp16 --tcp-connections 16
el done
