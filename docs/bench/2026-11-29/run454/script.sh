#!/bin/bash
# run454 (one H200): what point-to-point LL buffers cost in host memory. A 4-rank alltoall of 8 B
# and a 2-rank sendrecv of 8 B, host buffers, with main 483bc747 (dist/c104) and 526bfffd
# (dist/c108), NCCL_DEBUG=INFO with every subsystem; the logs are kept whole, and 6 s in (the test is then stopped) each rank's
# VmRSS/VmLck is read from /proc while the test runs. GPU 0 under MPS.
cd "$(dirname "$0")/.."; A=/tmp/run454; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; for v in c104 c108; do echo "$v: $(cat dist/$v/commit.txt)" >> $A/machine.txt; done
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 16
mps_on
declare -A VENV=([all]="NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=ALL")
for v in c104 c108; do for t in "4 alltoall" "2 sendrecv"; do set -- $t
  launch $v+all $1 $2 -b 8 -e 8 -n 300000 -w 100 > $A/mem-$v-$1-$2.log 2>&1 &
  sleep 6; for p in $(pgrep -f ${2}_perf); do grep -h -E '^(VmRSS|VmLck|VmPin)' /proc/$p/status | tr '\n' ' ' >> $A/mem-$v-$1-$2.proc; echo >> $A/mem-$v-$1-$2.proc; done
  pkill -f "${2}_perf"; wait; el "mem $v $1 $2: $(grep -c 'Host Alloc' $A/mem-$v-$1-$2.log) host allocations, $(grep -o 'Host Alloc Size [0-9]*' $A/mem-$v-$1-$2.log | awk '{s+=$4} END{printf "%.1f MiB", s/1048576}'); /proc: $(awk '{r+=$2; l+=$5} END{printf "RSS %.0f MiB, locked %.0f MiB over %d processes", r/1024, l/1024, NR}' $A/mem-$v-$1-$2.proc)"
done; done
mps_off
el done
