#!/bin/bash
# run182 (a 4-GPU host, 64 cores), issue 31: run 181 found more I/O threads faster at bulk and slower
# in the band (4 ranks, 10 threads with the auto 4 spinners: all_reduce 32-512 MiB 7-15 % faster,
# 512 KiB-2 MiB 2-5 % slower; 2 ranks, 16 threads: 512 MiB 1.38x faster, 512 KiB-4 MiB 10-25 %
# slower). Suspected: idle threads beyond the spinners sleep in epoll_wait on the worker set, and
# every readiness then wakes one (an IPI paid by whoever made the socket ready). Here every idle
# thread spins (NCCL_TCPXR_IO_SPIN_THREADS = the threads), so none sleeps while traffic flows.
# dist/new (6afb4c4's library = HEAD's code). 4 ranks one per GPU, 512 KiB-512 MiB, 20 iterations,
# -c 0: all_reduce and all_gather alternated twice, sendrecv once: 8 threads (auto, 4 spinners),
# 10 (4 spinners), 10 all spinning. 2 ranks on GPUs 0-1: all_reduce and sendrecv, 8 (auto), 16 (4
# spinners), 16 all spinning, once. Then correctness with 10 all spinning: 4 ranks, -c 1, 8 B-64 MiB,
# all_reduce with Ring and Tree forced, all_gather, host buffers.
cd "$(dirname "$0")/.."; A=/tmp/run182; source dist/common.sh
start_run
cat dist/new/commit.txt >> $A/machine.txt
tests_228
PG_SIZES="-b 512K -e 512M" PG_ITERS=20; PGLIB=dist/new
cfg(){ local name=$1 op=$2; case ${name##*-} in
  t8) pg $name $op host NCCL_TCPXR_IO_THREADS=8;; t10) pg $name $op host NCCL_TCPXR_IO_THREADS=10;;
  t10s10) pg $name $op host NCCL_TCPXR_IO_THREADS=10 NCCL_TCPXR_IO_SPIN_THREADS=10;; esac; }
for i in 1 2; do for op in all_reduce all_gather; do for c in t8 t10 t10s10; do cfg r$i-$op-$c $op; done; done; done
for c in t8 t10s10; do cfg r1-sendrecv-$c sendrecv; done
p2(){ local name=$1 op=$2; shift 2
  local xs=(); for kv in CUDA_VISIBLE_DEVICES=0,1 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/dist/new:$LD_LIBRARY_PATH NCCL_TCPXR_GPU_BUFFERS=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET "$@"; do xs+=(-x "$kv"); done
  timeout 60 mpirun --allow-run-as-root --bind-to none -np 2 "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/${op}_perf -b 512K -e 512M -f 2 -n 20 -w 5 -c 0 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$name.log)"; }
for op in all_reduce sendrecv; do p2 two-$op-t8 $op; p2 two-$op-t16 $op NCCL_TCPXR_IO_THREADS=16; p2 two-$op-t16s16 $op NCCL_TCPXR_IO_THREADS=16 NCCL_TCPXR_IO_SPIN_THREADS=16; done
c4(){ local name=$1 op=$2; shift 2
  local xs=(); for kv in CUDA_VISIBLE_DEVICES=0,1,2,3 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/dist/new:$LD_LIBRARY_PATH NCCL_TCPXR_GPU_BUFFERS=0 NCCL_TCPXR_IO_THREADS=10 NCCL_TCPXR_IO_SPIN_THREADS=10 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET "$@"; do xs+=(-x "$kv"); done
  timeout 60 mpirun --allow-run-as-root --bind-to none -np 4 "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/${op}_perf -b 8 -e 64M -f 4 -n 3 -w 1 -c 1 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? #wrong: $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s ", $9}' $A/$name.log) | $(grep -a -h 'Out of bounds' $A/$name.log | awk '{print $7,$8}')"; }
c4 check-all_reduce-ring all_reduce NCCL_ALGO=Ring; c4 check-all_reduce-tree all_reduce NCCL_ALGO=Tree; c4 check-all_gather all_gather
{ uptime; } >> $A/machine.txt 2>&1
el done
