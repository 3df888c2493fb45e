#!/bin/bash
# run168 (a fresh 4-GPU host), issue 31's band at 4 ranks one per GPU, continued from runs 166-167:
# the channel count. tcpxr's tuner puts all_reduce shares of 256 KiB-2 MiB on the ring in Simple
# on at most 2 channels (chosen at 2 ranks on 16 cores); with NCCL_MIN_NCHANNELS=NCCL_MAX_NCHANNELS=N
# it keeps the ring in Simple and leaves the count to N: 2, 4 and 8. Also every idle I/O thread
# spinning (NCCL_TCPXR_IO_SPIN_THREADS=8: no wake-up for any hand-off), which bounds what wake-ups
# cost. What NCCL picks for Socket 1x1 and 2x2 in the band is logged first (NCCL_DEBUG_SUBSYS=TUNING,
# 2 iterations). all_reduce and all_gather 256 KiB-16 MiB, 30 iterations, -c 0, alternated twice.
cd "$(dirname "$0")/.."; A=/tmp/run168; source dist/common.sh
start_run
tests_228
PG_SIZES="-b 256K -e 16M" PG_ITERS=30  # pg: common.sh
for t in 1x1:1:1 2x2:2:2; do IFS=: read n th so <<< "$t"
  timeout 60 mpirun --allow-run-as-root --bind-to none -np 4 -x CUDA_VISIBLE_DEVICES=0,1,2,3 -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 -x NCCL_SOCKET_IFNAME=lo -x NCCL_NVLS_ENABLE=0 -x NCCL_NET=Socket -x NCCL_NET_PLUGIN=none -x NCCL_SOCKET_NTHREADS=$th -x NCCL_NSOCKS_PERTHREAD=$so -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=TUNING sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/all_reduce_perf -b 256K -e 16M -f 2 -n 2 -w 0 -c 0 -g 1 > $A/tuning-socket$n.log 2>&1; el "tuning socket$n rc=$? $(grep -a -c 'Algo' $A/tuning-socket$n.log) lines"; done
for i in 1 2; do for op in all_reduce all_gather; do
  pg r$i-$op-tcpxr $op host; pg r$i-$op-ch2 $op host NCCL_MIN_NCHANNELS=2 NCCL_MAX_NCHANNELS=2; pg r$i-$op-ch4 $op host NCCL_MIN_NCHANNELS=4 NCCL_MAX_NCHANNELS=4
  pg r$i-$op-ch8 $op host NCCL_MIN_NCHANNELS=8 NCCL_MAX_NCHANNELS=8; pg r$i-$op-spinall $op host NCCL_TCPXR_IO_SPIN_THREADS=8
  pg r$i-$op-socket1x1 $op socket NCCL_SOCKET_NTHREADS=1 NCCL_NSOCKS_PERTHREAD=1; pg r$i-$op-socket2x2 $op socket NCCL_SOCKET_NTHREADS=2 NCCL_NSOCKS_PERTHREAD=2; done; done
{ uptime; } >> $A/machine.txt 2>&1
el done
