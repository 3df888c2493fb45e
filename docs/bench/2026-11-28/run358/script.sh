#!/bin/bash
# run358 (2x H200, 2 ranks one per GPU; prepared in session 42, not run): which messages NCCL's ring
# sends over tcpxr, and how deep it keeps each connection, where runs 354-357 found cutting
# sub-chunk messages finer helps the all_reduce of 1-2 MiB and costs the bulk. main's dc9712c3
# (dist/c58: NCCL_TCPXR_STATS=1 gives each comm's messages by size class and the others out at
# each post). One launch per op and size, 20 iterations, host buffers, each comm's stats lines
# kept: all_reduce 1, 2, 4, 16 MiB; all_gather and reduce_scatter 2 and 16 MiB; sendrecv 2 MiB.
cd "$(dirname "$0")/.."; A=/tmp/run358; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0,1; echo "c58: $(cat dist/c58/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
one(){ local op=$1 size=$2
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,TUNING
    NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/c58/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0 NCCL_TCPXR_STATS=1)
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 60 mpirun --allow-run-as-root --bind-to none -np 2 "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/${op}_perf -b $size -e $size -n 20 -w 5 -c 1 -g 1 > $A/$op-$size.log 2>&1
  grep -h "stats send:\|stats receive:\|Bytes -> Algo" $A/$op-$size.log | sed 's/^.*NCCL INFO //' | sort | uniq -c > $A/$op-$size-stats.txt
  el "$op $size rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{print $6 " us, #wrong " $9}' $A/$op-$size.log | head -1); $(grep -c 'stats send:' $A/$op-$size-stats.txt) send lines"; }
for s in 1M 2M 4M 16M; do one all_reduce $s; done
for op in all_gather reduce_scatter; do for s in 2M 16M; do one $op $s; done; done
one sendrecv 2M
el done
