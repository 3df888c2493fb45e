#!/bin/bash
# run175 (a fresh 4-GPU host), issue 31's 4-rank band, after run 174: a stripe's own thread that
# spins between turns took hand-offs in 0.5 us (18-20 us through a wake) and ran 1 MiB all_reduce
# in 506 us, but one stripe is slow from 16 MiB and 2-4 stripes of own threads oversubscribe the
# cores. Now the shared pool (bounded threads, every stripe) with hand-offs taken by a spinning
# worker through a queue it checks with an atomic load (TCPXR_EXP_QUEUE=1), not through epoll,
# with 4 and 8 spinners (NCCL_TCPXR_IO_SPIN_THREADS); beside the pool's 8 spinners on epoll as it
# is, and run 174's own-thread setting. Experiment build (5177c73 with run174/own-thread-and-stay.patch and run175/queue-experiment.patch, in dist/exp). 4 ranks one
# per GPU, NCCL 2.28.3, all_reduce and all_gather 256 KiB-64 MiB, 30 iterations, -c 0, alternated
# three times, against Socket 1x1 and 2x2; then counters over 500 all_reduces of 1 MiB, queue, 8.
cd "$(dirname "$0")/.."; A=/tmp/run175; source dist/common.sh
start_run
tests_228
PG_SIZES="-b 256K -e 64M" PG_ITERS=30  # pg: common.sh
for i in 1 2 3; do for op in all_reduce all_gather; do
  pg r$i-$op-tcpxr $op host
  PGLIB=dist/exp pg r$i-$op-q8 $op host TCPXR_EXP_QUEUE=1 NCCL_TCPXR_IO_SPIN_THREADS=8
  PGLIB=dist/exp pg r$i-$op-q4 $op host TCPXR_EXP_QUEUE=1 NCCL_TCPXR_IO_SPIN_THREADS=4
  PGLIB=dist/exp pg r$i-$op-spin8 $op host NCCL_TCPXR_IO_SPIN_THREADS=8
  PGLIB=dist/exp pg r$i-$op-ded1is $op host TCPXR_EXP_DEDICATED=1 TCPXR_EXP_IDLE_SPIN_US=200 NCCL_TCPXR_STRIPES=1
  pg r$i-$op-socket1x1 $op socket NCCL_SOCKET_NTHREADS=1 NCCL_NSOCKS_PERTHREAD=1; pg r$i-$op-socket2x2 $op socket NCCL_SOCKET_NTHREADS=2 NCCL_NSOCKS_PERTHREAD=2; done; done
timeout 60 mpirun --allow-run-as-root --bind-to none -np 4 -x CUDA_VISIBLE_DEVICES=0,1,2,3 -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 -x NCCL_SOCKET_IFNAME=lo -x NCCL_NVLS_ENABLE=0 -x NCCL_NET=tcpxr -x NCCL_NET_PLUGIN=tcpxr -x LD_LIBRARY_PATH=$PWD/dist/exp:$LD_LIBRARY_PATH -x NCCL_TCPXR_GPU_BUFFERS=0 -x TCPXR_EXP_QUEUE=1 -x NCCL_TCPXR_IO_SPIN_THREADS=8 -x NCCL_TCPXR_STATS=1 -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,NET sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/all_reduce_perf -b 1M -e 1M -n 500 -w 20 -c 0 -g 1 > $A/stats-1m-q8.log 2>&1; el "stats 1M q8 rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/stats-1m-q8.log)"
{ uptime; } >> $A/machine.txt 2>&1
el done
