#!/bin/bash
# run183 (a 4-GPU host, 64 cores): 8fccc89's auto pool (not kept: run183/pool-rule.patch; dist/new2: 10 I/O threads all spinning at 4
# ranks on 64 cores, 16 at 2 ranks) against 6afb4c4's (dist/new: 8 threads, 4 spinners) and Socket
# 1x1, 2x2, 4x4 in the same run; 4 ranks one per GPU, all_reduce and all_gather 512 KiB-512 MiB,
# 20 iterations, -c 0, once; 2 ranks on GPUs 0-1, all_reduce, new and old; the effective pool as
# logged.
cd "$(dirname "$0")/.."; A=/tmp/run183; source dist/common.sh
start_run
cat dist/new2/commit.txt dist/new/commit.txt >> $A/machine.txt
tests_228
PG_SIZES="-b 512K -e 512M" PG_ITERS=20
for op in all_reduce all_gather; do
  PGLIB=dist/new2 pg $op-new $op host; PGLIB=dist/new pg $op-old $op host
  pg $op-socket1x1 $op socket NCCL_SOCKET_NTHREADS=1 NCCL_NSOCKS_PERTHREAD=1; pg $op-socket2x2 $op socket NCCL_SOCKET_NTHREADS=2 NCCL_NSOCKS_PERTHREAD=2; pg $op-socket4x4 $op socket NCCL_SOCKET_NTHREADS=4 NCCL_NSOCKS_PERTHREAD=4
done
el "pool new: $(grep -a -o 'IO_THREADS = [0-9][0-9]*\|SPIN_THREADS = [0-9][0-9]*' $A/all_reduce-new.log | head -2 | tr '\n' ' ') old: $(grep -a -o 'IO_THREADS = [0-9][0-9]*\|SPIN_THREADS = [0-9][0-9]*' $A/all_reduce-old.log | head -2 | tr '\n' ' ')"
p2(){ local name=$1 lib=$2; shift 2
  local xs=(); for kv in CUDA_VISIBLE_DEVICES=0,1 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/$lib:$LD_LIBRARY_PATH NCCL_TCPXR_GPU_BUFFERS=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET "$@"; do xs+=(-x "$kv"); done
  timeout 60 mpirun --allow-run-as-root --bind-to none -np 2 "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/all_reduce_perf -b 512K -e 512M -f 2 -n 20 -w 5 -c 0 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$name.log) | $(grep -a -o 'IO_THREADS = [0-9][0-9]*\|SPIN_THREADS = [0-9][0-9]*' $A/$name.log | head -2 | tr '\n' ' ')"; }
p2 two-all_reduce-new dist/new2; p2 two-all_reduce-old dist/new
el done
