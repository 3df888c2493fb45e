#!/bin/bash
# run451 (one H200): 184ab7be (dist/c107), point-to-point LL over the socket transport as tcpxr's
# default, against main 483bc747 (dist/c104) and Socket's four tunings: sendrecv 8 B-64 KiB (x2,
# -n 1000 -w 200), 5 rounds at 2 ranks and 4 at 4; alltoall at 4 ranks, 2 rounds; NCCL's host
# allocations over a 4-rank alltoall with each library (NCCL_DEBUG_SUBSYS=ALLOC); the correctness
# set (all_reduce, sendrecv, alltoall) on c107. GPU 0 under MPS.
cd "$(dirname "$0")/.."; A=/tmp/run451; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; for v in c104 c107; do echo "$v: $(cat dist/$v/commit.txt)" >> $A/machine.txt; done
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 16
mps_on
declare -A VENV=([alloc]="NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ALLOC")
small=(-b 8 -e 64K -f 2 -n 1000 -w 200)
rounds 2 5 sendrecv "c104 c107 socket s1x1 s2x2 s4x4" "${small[@]}"
rounds 4 4 sendrecv "c104 c107 socket s1x1 s2x2 s4x4" "${small[@]}"
rounds 4 2 alltoall "c104 c107 socket s1x1 s2x2 s4x4" -b 8 -e 64K -f 4 -n 500 -w 100
for v in c104 c107; do
  launch $v+alloc 4 alltoall -b 8 -e 8 -n 100 -w 10 > $A/alloc-$v.log 2>&1
  el "alloc $v rc=$?: $(grep -c 'Host Alloc' $A/alloc-$v.log) host allocations, $(grep -o 'Host Alloc Size [0-9]*' $A/alloc-$v.log | awk '{s+=$4} END{printf "%.1f MiB", s/1048576}') in all 4 ranks; $(grep -m1 -o 'NCCL_ALLOC_P2P_NET_LL_BUFFERS unset: set to 1' $A/alloc-$v.log)"
done
mps_off
checks dist/c107 all_reduce,sendrecv,alltoall
rm -rf $A/check-*/logs $A/check-*/mps-log
el done
