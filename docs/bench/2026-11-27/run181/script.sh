#!/bin/bash
# run181 (a 4-GPU host, 64 cores), issue 31 bulk: run 180 found tcpxr's 8 I/O threads a rank (the
# auto pool's cap) the bound: tcpxr-bench ring at 4 ranks, 8 channels, 512 KiB: tcpxr 53.9 GB/s on
# 35.6 cores against plain TCP's 109.6 with 8 connections a rank. Here the pool's size by
# NCCL_TCPXR_IO_THREADS (dist/new: 6afb4c4's library = HEAD's code): (1) tcpxr-bench ring, 8
# channels, 512 KiB, 3 s, no baseline: 4 ranks with 8, 10, 14 threads; 2 ranks with 8, 16, 24.
# (2) nccl-tests at 4 ranks one per GPU, 512 KiB-512 MiB, 20 iterations, -c 0: all_reduce and
# all_gather alternated twice, sendrecv once, with 8 threads (auto: 4 spinners), 10 (auto: 4
# spinners), 14 (auto: 1 spinner) and 14 with 4 spinners. (3) 2 ranks on GPUs 0-1, all_reduce and
# sendrecv, 8, 16, 24 threads (auto spinners: 4, 1, 1).
cd "$(dirname "$0")/.."; A=/tmp/run181; source dist/common.sh
start_run
cat dist/new/commit.txt >> $A/machine.txt
tests_228
for t in 8 10 14; do NCCL_TCPXR_IO_THREADS=$t timeout 60 dist/new/tcpxr-bench ring --ranks 4 --channels 8 --size 512K --seconds 3 --no-baseline > $A/ring-4-t$t.txt 2>&1
  el "ring 4 ranks t$t rc=$? $(grep -a -E '^ +tcpxr +all' $A/ring-4-t$t.txt)"; done
for t in 8 16 24; do NCCL_TCPXR_IO_THREADS=$t timeout 60 dist/new/tcpxr-bench ring --ranks 2 --channels 8 --size 512K --seconds 3 --no-baseline > $A/ring-2-t$t.txt 2>&1
  el "ring 2 ranks t$t rc=$? $(grep -a -E '^ +tcpxr +all' $A/ring-2-t$t.txt)"; done
PG_SIZES="-b 512K -e 512M" PG_ITERS=20; PGLIB=dist/new
cfg(){ local name=$1 op=$2; case ${name##*-} in
  t8) pg $name $op host NCCL_TCPXR_IO_THREADS=8 NCCL_TCPXR_STATS=1;; t10) pg $name $op host NCCL_TCPXR_IO_THREADS=10;;
  t14) pg $name $op host NCCL_TCPXR_IO_THREADS=14;; t14s4) pg $name $op host NCCL_TCPXR_IO_THREADS=14 NCCL_TCPXR_IO_SPIN_THREADS=4 NCCL_TCPXR_STATS=1;; esac; }
for i in 1 2; do for op in all_reduce all_gather; do for c in t8 t10 t14 t14s4; do cfg r$i-$op-$c $op; done; done; done
for c in t8 t10 t14 t14s4; do cfg r1-sendrecv-$c sendrecv; done
p2(){ local name=$1 op=$2; shift 2
  local xs=(); for kv in CUDA_VISIBLE_DEVICES=0,1 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/dist/new:$LD_LIBRARY_PATH NCCL_TCPXR_GPU_BUFFERS=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET "$@"; do xs+=(-x "$kv"); done
  timeout 60 mpirun --allow-run-as-root --bind-to none -np 2 "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/${op}_perf -b 512K -e 512M -f 2 -n 20 -w 5 -c 0 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$name.log)"; }
for op in all_reduce sendrecv; do for t in 8 16 24; do p2 two-$op-t$t $op NCCL_TCPXR_IO_THREADS=$t; done; done
{ uptime; } >> $A/machine.txt 2>&1
el done
