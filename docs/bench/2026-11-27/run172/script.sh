#!/bin/bash
# run172 (a fresh 4-GPU host), issue 31's 4-rank band: an experiment build (5177c73 with run174/own-thread-and-stay.patch, in
# dist/exp) whose I/O worker stays on a stripe whose bytes are in motion, pumping again for up to
# TCPXR_EXP_STAY_US before it re-arms the socket in the pool's epoll set (as NCCL Socket's helpers
# spin on their task), at 30 and 100 us; and 32 KiB chunks (a 64 KiB step message over 2 stripes).
# 4 ranks one per GPU, NCCL 2.28.3, all_reduce and all_gather 256 KiB-16 MiB, 30 iterations, -c 0,
# alternated three times, against Socket 1x1 and 2x2; then counters (NCCL_TCPXR_STATS=1) over 500
# all_reduces of 1 MiB with stay 100.
cd "$(dirname "$0")/.."; A=/tmp/run172; source dist/common.sh
start_run
tests_228
PG_SIZES="-b 256K -e 16M" PG_ITERS=30  # pg: common.sh
for i in 1 2 3; do for op in all_reduce all_gather; do
  pg r$i-$op-tcpxr $op host; PGLIB=dist/exp pg r$i-$op-stay30 $op host TCPXR_EXP_STAY_US=30; PGLIB=dist/exp pg r$i-$op-stay100 $op host TCPXR_EXP_STAY_US=100
  pg r$i-$op-chunk32k $op host NCCL_TCPXR_CHUNK_BYTES=32K
  pg r$i-$op-socket1x1 $op socket NCCL_SOCKET_NTHREADS=1 NCCL_NSOCKS_PERTHREAD=1; pg r$i-$op-socket2x2 $op socket NCCL_SOCKET_NTHREADS=2 NCCL_NSOCKS_PERTHREAD=2; done; done
timeout 60 mpirun --allow-run-as-root --bind-to none -np 4 -x CUDA_VISIBLE_DEVICES=0,1,2,3 -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 -x NCCL_SOCKET_IFNAME=lo -x NCCL_NVLS_ENABLE=0 -x NCCL_NET=tcpxr -x NCCL_NET_PLUGIN=tcpxr -x LD_LIBRARY_PATH=$PWD/dist/exp:$LD_LIBRARY_PATH -x NCCL_TCPXR_GPU_BUFFERS=0 -x TCPXR_EXP_STAY_US=100 -x NCCL_TCPXR_STATS=1 -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,NET sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/all_reduce_perf -b 1M -e 1M -n 500 -w 20 -c 0 -g 1 > $A/stats-1m-stay100.log 2>&1; el "stats 1M stay100 rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/stats-1m-stay100.log)"
{ uptime; } >> $A/machine.txt 2>&1
el done
