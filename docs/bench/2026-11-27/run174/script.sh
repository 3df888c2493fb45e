#!/bin/bash
# run174 (a fresh 4-GPU host), issue 31's 4-rank band, after run 173: a stripe's own mover thread
# woken by unpark waits 18-20 us for the wake (as the pool's sleeping workers do), and one stripe
# with its own thread came near Socket 1x1 at 512 KiB-2 MiB but lost at 16 MiB. Now the own thread
# also spins for TCPXR_EXP_IDLE_SPIN_US=200 after each turn before it parks, so a hand-off while
# traffic flows needs no wake, at 1, 2 and 4 stripes (4, 8 and 16 threads a rank). Experiment
# build (5177c73 with run174/own-thread-and-stay.patch, in dist/exp). 4 ranks one per GPU, NCCL 2.28.3, all_reduce and all_gather
# 256 KiB-64 MiB, 30 iterations, -c 0, alternated three times, against Socket 1x1 and 2x2; then
# counters over 500 all_reduces of 1 MiB, one stripe, idle spin.
cd "$(dirname "$0")/.."; A=/tmp/run174; source dist/common.sh
start_run
tests_228
PG_SIZES="-b 256K -e 64M" PG_ITERS=30  # pg: common.sh
D=(TCPXR_EXP_DEDICATED=1 TCPXR_EXP_IDLE_SPIN_US=200)
for i in 1 2 3; do for op in all_reduce all_gather; do
  pg r$i-$op-tcpxr $op host
  PGLIB=dist/exp pg r$i-$op-ded1 $op host TCPXR_EXP_DEDICATED=1 NCCL_TCPXR_STRIPES=1
  PGLIB=dist/exp pg r$i-$op-ded1is $op host "${D[@]}" NCCL_TCPXR_STRIPES=1
  PGLIB=dist/exp pg r$i-$op-ded2is $op host "${D[@]}" NCCL_TCPXR_STRIPES=2
  PGLIB=dist/exp pg r$i-$op-ded4is $op host "${D[@]}"
  pg r$i-$op-socket1x1 $op socket NCCL_SOCKET_NTHREADS=1 NCCL_NSOCKS_PERTHREAD=1; pg r$i-$op-socket2x2 $op socket NCCL_SOCKET_NTHREADS=2 NCCL_NSOCKS_PERTHREAD=2; done; done
timeout 60 mpirun --allow-run-as-root --bind-to none -np 4 -x CUDA_VISIBLE_DEVICES=0,1,2,3 -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 -x NCCL_SOCKET_IFNAME=lo -x NCCL_NVLS_ENABLE=0 -x NCCL_NET=tcpxr -x NCCL_NET_PLUGIN=tcpxr -x LD_LIBRARY_PATH=$PWD/dist/exp:$LD_LIBRARY_PATH -x NCCL_TCPXR_GPU_BUFFERS=0 -x TCPXR_EXP_DEDICATED=1 -x TCPXR_EXP_IDLE_SPIN_US=200 -x NCCL_TCPXR_STRIPES=1 -x NCCL_TCPXR_STATS=1 -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,NET sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/all_reduce_perf -b 1M -e 1M -n 500 -w 20 -c 0 -g 1 > $A/stats-1m-ded1is.log 2>&1; el "stats 1M ded1is rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/stats-1m-ded1is.log)"
{ uptime; } >> $A/machine.txt 2>&1
el done
