#!/bin/bash
# run179 (a fresh 4-GPU host; prepared 2026-11-27 for the next session), issue 31's 4-rank band:
# worker-stripe affinity, an experiment build (dist/exp2: 96b68b6 with dist/exp2/affinity.patch;
# records keep the patch as run179/affinity.patch). With TCPXR_EXP_AFFINITY=1 a hand-off goes to
# the spinning worker that last served the stripe, through that worker's own mailbox, before the
# shared queue: run 174 found a 64 KiB chunk's copy 16 us with a thread fixed to its stripe against
# 22-23 us in the pool (run 175). Main (dist/new) against the experiment with and without the
# variable, and with one stripe, and Socket 1x1 and 2x2; 4 ranks one per GPU, NCCL 2.28.3,
# all_reduce and all_gather 256 KiB-64 MiB, 30 iterations, -c 0, alternated three times; then the
# per-chunk times over 500 all_reduces of 1 MiB, main and affinity.
cd "$(dirname "$0")/.."; A=/tmp/run179; source dist/common.sh
start_run
cat dist/new/commit.txt dist/exp2/commit.txt >> $A/machine.txt
tests_228
PG_SIZES="-b 256K -e 64M" PG_ITERS=30  # pg: common.sh
for i in 1 2 3; do for op in all_reduce all_gather; do
  PGLIB=dist/new pg r$i-$op-main $op host
  PGLIB=dist/exp2 pg r$i-$op-aff $op host TCPXR_EXP_AFFINITY=1
  PGLIB=dist/exp2 pg r$i-$op-aff1 $op host TCPXR_EXP_AFFINITY=1 NCCL_TCPXR_STRIPES=1
  pg r$i-$op-socket1x1 $op socket NCCL_SOCKET_NTHREADS=1 NCCL_NSOCKS_PERTHREAD=1; pg r$i-$op-socket2x2 $op socket NCCL_SOCKET_NTHREADS=2 NCCL_NSOCKS_PERTHREAD=2; done; done
st(){ local name=$1 lib=$2; shift 2
  local xs=(); for kv in CUDA_VISIBLE_DEVICES=0,1,2,3 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/$lib:$LD_LIBRARY_PATH NCCL_TCPXR_GPU_BUFFERS=0 NCCL_TCPXR_STATS=1 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET "$@"; do xs+=(-x "$kv"); done
  timeout 60 mpirun --allow-run-as-root --bind-to none -np 4 "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/all_reduce_perf -b 1M -e 1M -n 500 -w 20 -c 0 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$name.log)"; }
st stats-1m-main dist/new; st stats-1m-aff dist/exp2 TCPXR_EXP_AFFINITY=1
{ uptime; } >> $A/machine.txt 2>&1
el done
