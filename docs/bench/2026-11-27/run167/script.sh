#!/bin/bash
# run167 (a fresh 4-GPU host), issue 31's 512 KiB-16 MiB band at 4 ranks one per GPU, where run 166
# had tcpxr at 0.72-0.92 of Socket's best: which of the I/O pool's settings, chosen on 16 cores at
# 2 ranks, costs the 4-rank ring on 64 cores? tcpxr as is (hand-off 0: every striped chunk to an
# I/O thread; 1 spinning thread; 32 KiB idle inline), the proxy thread moving chunks itself
# (NCCL_TCPXR_HANDOFF_BYTES=512K), 4 spinning I/O threads, 256 KiB idle inline; Socket 1x1 and 2x2.
# all_reduce and all_gather 256 KiB-16 MiB, 30 iterations, -c 0, alternated twice, NCCL 2.28.3.
cd "$(dirname "$0")/.."; A=/tmp/run167; source dist/common.sh
start_run
tests_228
PG_SIZES="-b 256K -e 16M" PG_ITERS=30  # pg: common.sh
for i in 1 2; do for op in all_reduce all_gather; do
  pg r$i-$op-tcpxr $op host; pg r$i-$op-handoff512k $op host NCCL_TCPXR_HANDOFF_BYTES=512K; pg r$i-$op-spin4 $op host NCCL_TCPXR_IO_SPIN_THREADS=4
  pg r$i-$op-inline256k $op host NCCL_TCPXR_INLINE_IDLE_BYTES=256K
  pg r$i-$op-socket1x1 $op socket NCCL_SOCKET_NTHREADS=1 NCCL_NSOCKS_PERTHREAD=1; pg r$i-$op-socket2x2 $op socket NCCL_SOCKET_NTHREADS=2 NCCL_NSOCKS_PERTHREAD=2; done; done
{ uptime; } >> $A/machine.txt 2>&1
el done
