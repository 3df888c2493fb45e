#!/bin/bash
# run169 (a fresh 4-GPU host), issue 31's band at 4 ranks one per GPU, after run 168 showed NCCL
# running Socket 1x1 and 2x2 on the same ring in Simple on 2 channels as tcpxr's tuner, and every
# I/O thread spinning not closing the gap: one stripe per connection (NCCL_TCPXR_STRIPES=1: one data
# socket, as Socket 1x1 has), with and without all threads spinning; then tcpxr's counters
# (NCCL_TCPXR_STATS=1) over 500 all_reduces of 1 MiB. all_reduce and all_gather 256 KiB-16 MiB, 30
# iterations, -c 0, alternated twice, against Socket 1x1 and 2x2.
cd "$(dirname "$0")/.."; A=/tmp/run169; source dist/common.sh
start_run
tests_228
PG_SIZES="-b 256K -e 16M" PG_ITERS=30  # pg: common.sh
for i in 1 2; do for op in all_reduce all_gather; do
  pg r$i-$op-tcpxr $op host; pg r$i-$op-stripes1 $op host NCCL_TCPXR_STRIPES=1; pg r$i-$op-stripes1spin $op host NCCL_TCPXR_STRIPES=1 NCCL_TCPXR_IO_SPIN_THREADS=8
  pg r$i-$op-socket1x1 $op socket NCCL_SOCKET_NTHREADS=1 NCCL_NSOCKS_PERTHREAD=1; pg r$i-$op-socket2x2 $op socket NCCL_SOCKET_NTHREADS=2 NCCL_NSOCKS_PERTHREAD=2; done; done
timeout 60 mpirun --allow-run-as-root --bind-to none -np 4 -x CUDA_VISIBLE_DEVICES=0,1,2,3 -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 -x NCCL_SOCKET_IFNAME=lo -x NCCL_NVLS_ENABLE=0 -x NCCL_NET=tcpxr -x NCCL_NET_PLUGIN=tcpxr -x LD_LIBRARY_PATH=$PWD/dist:$LD_LIBRARY_PATH -x NCCL_TCPXR_GPU_BUFFERS=0 -x NCCL_TCPXR_STATS=1 -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,NET sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/all_reduce_perf -b 1M -e 1M -n 500 -w 20 -c 0 -g 1 > $A/stats-1m.log 2>&1; el "stats 1M rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/stats-1m.log)"
{ uptime; } >> $A/machine.txt 2>&1
el done
