#!/bin/bash
# run173 (a fresh 4-GPU host), issue 31's 4-rank band: the thread per connection, the candidate the
# last notes named. Experiment build (5177c73 with run174/own-thread-and-stay.patch, in dist/exp): with TCPXR_EXP_DEDICATED=1 every
# stripe has a mover thread of its own instead of the shared pool; the proxy hands a chunk to it by
# unpark; it pumps the socket, spinning on a blocked socket for TCPXR_EXP_SPIN_US (50; 1000 below)
# before it blocks in poll, as NCCL Socket's helpers spin on their tasks. With 4 stripes (16
# threads a rank) and with 1 (NCCL_TCPXR_STRIPES=1: 4 a rank, Socket 1x1's shape). 4 ranks one per
# GPU, NCCL 2.28.3, all_reduce and all_gather 256 KiB-16 MiB, 30 iterations, -c 0, alternated three
# times, against Socket 1x1 and 2x2; then counters over 500 all_reduces of 1 MiB, dedicated.
cd "$(dirname "$0")/.."; A=/tmp/run173; source dist/common.sh
start_run
tests_228
PG_SIZES="-b 256K -e 16M" PG_ITERS=30  # pg: common.sh
for i in 1 2 3; do for op in all_reduce all_gather; do
  pg r$i-$op-tcpxr $op host
  PGLIB=dist/exp pg r$i-$op-ded $op host TCPXR_EXP_DEDICATED=1
  PGLIB=dist/exp pg r$i-$op-ded1 $op host TCPXR_EXP_DEDICATED=1 NCCL_TCPXR_STRIPES=1
  PGLIB=dist/exp pg r$i-$op-ded1spin $op host TCPXR_EXP_DEDICATED=1 NCCL_TCPXR_STRIPES=1 TCPXR_EXP_SPIN_US=1000
  pg r$i-$op-socket1x1 $op socket NCCL_SOCKET_NTHREADS=1 NCCL_NSOCKS_PERTHREAD=1; pg r$i-$op-socket2x2 $op socket NCCL_SOCKET_NTHREADS=2 NCCL_NSOCKS_PERTHREAD=2; done; done
timeout 60 mpirun --allow-run-as-root --bind-to none -np 4 -x CUDA_VISIBLE_DEVICES=0,1,2,3 -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 -x NCCL_SOCKET_IFNAME=lo -x NCCL_NVLS_ENABLE=0 -x NCCL_NET=tcpxr -x NCCL_NET_PLUGIN=tcpxr -x LD_LIBRARY_PATH=$PWD/dist/exp:$LD_LIBRARY_PATH -x NCCL_TCPXR_GPU_BUFFERS=0 -x TCPXR_EXP_DEDICATED=1 -x NCCL_TCPXR_STATS=1 -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,NET sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/all_reduce_perf -b 1M -e 1M -n 500 -w 20 -c 0 -g 1 > $A/stats-1m-ded.log 2>&1; el "stats 1M ded rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/stats-1m-ded.log)"
{ uptime; } >> $A/machine.txt 2>&1
el done
