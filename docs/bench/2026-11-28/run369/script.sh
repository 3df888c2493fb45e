#!/bin/bash
# run369 (4x H200, 4 ranks one per GPU; session 45): which messages NCCL's ring sends over tcpxr at
# 4 ranks in the band where runs 366 and 368 found cutting sub-chunk messages helps all_reduce and
# costs all_gather and reduce_scatter of 4-8 MiB (run 358 measured 2 ranks only). main's library
# (dist/c67, commit.txt; NCCL_TCPXR_STATS=1: each comm's messages by size class and the others out
# at each post; TUNING: NCCL's algorithm, protocol and channels). One launch per op and size, 20
# iterations, host buffers: all_reduce 2, 4, 8 MiB; all_gather and reduce_scatter 4 and 8 MiB.
cd "$(dirname "$0")/.."; A=/tmp/run369; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0,1,2,3; echo "c67: $(cat dist/c67/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
one(){ local op=$1 size=$2
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,TUNING
    NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/c67/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0 NCCL_TCPXR_STATS=1)
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 60 mpirun --allow-run-as-root --bind-to none -np 4 "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/${op}_perf -b $size -e $size -n 20 -w 5 -c 1 -g 1 > $A/$op-$size.log 2>&1
  grep -h "stats send:\|stats receive:\|Bytes -> Algo" $A/$op-$size.log | sed 's/^.*NCCL INFO //' | sort | uniq -c > $A/$op-$size-stats.txt
  el "$op $size rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{print $6 " us, #wrong " $9}' $A/$op-$size.log | head -1); $(grep -c 'stats send:' $A/$op-$size-stats.txt) send lines"; }
for s in 2M 4M 8M; do one all_reduce $s; done
for op in all_gather reduce_scatter; do for s in 4M 8M; do one $op $s; done; done
el done
