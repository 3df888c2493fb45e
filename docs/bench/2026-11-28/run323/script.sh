#!/bin/bash
# run323 (a 4-GPU host, 4 ranks one per GPU): in run 322 lo reported at 10 Gb/s instead of tcpxr's
# 400 (NCCL_TCPXR_SPEED_MBPS=10000, NCCL's 8 channels kept) took all_reduce and all_gather 512 KiB-
# 4 MiB 1.00-1.21 of Socket's best (default 0.76-1.08) and bulk 1.35-1.81 (1.15-1.49), NCCL's
# choices unchanged at 1-4 MiB. NCCL 2.28 (tuning.cc) gives the ring's Simple 256 threads a channel
# where the ring's bandwidth x channels is at most PCI_BW (12 GB/s), else 512: the candidate. dist/c46
# (main) as is, with NCCL_TCPXR_SPEED_MBPS=10000 (sp), with NCCL_NTHREADS=256 (nt, which also halves
# LL's and the tree's Simple threads), against Socket 1x1 and 2x2:
# 1. NCCL's TUNING table (Max NThreads) and GRAPH lines for each, all_reduce 1 MiB, 2 iterations;
# 2. all_reduce and reduce_scatter 512 KiB-4 MiB, 100 iterations, --cycles 3 --repeat 2;
# 3. the same 32-256 MiB, 10 iterations, --repeat 2;
# 4. all_reduce and all_gather 8 B-64 KiB, 200 iterations, --cycles 3 --repeat 2;
# 5. GPU buffers: all_reduce 1-256 MiB, 20 iterations, --repeat 2, tcpxr-gpu, +sp, +nt.
cd "$(dirname "$0")/.."; A=/tmp/run323; source dist/common.sh
start_run; echo "c46: $(cat dist/c46/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
V=(--variant sp:NCCL_TCPXR_SPEED_MBPS=10000 --variant nt:NCCL_NTHREADS=256)
C=tcpxr-host,tcpxr-host+sp,tcpxr-host+nt
rt(){ local name=$1 t=$2; shift 2
  timeout $t python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c46 --mpirun --ranks 4 --timeout 60 "${V[@]}" --out $A/$name "$@" > $A/$name.txt 2>&1
  el "$name rc=$? $(grep -c ' ok, ' $A/$name.txt) ok, $(grep -c FAILED $A/$name.txt) failed"; }
rt tuning 50 --ops all_reduce --min 1M --max 1M --iters 2 --warmup 1 --configs $C --env NCCL_DEBUG_SUBSYS=TUNING,GRAPH
for f in $A/tuning/logs/*.nccl.*; do grep -q "Max NThreads" $f || continue; echo "== $(basename $f)"
  grep -h "Max NThreads\|Algorithm  \|Protocol  \|Pattern\|AllReduce |\|Bytes -> Algo" $f | sed -E 's/^.*NCCL INFO //' | sort | uniq -c; done > $A/threads.txt
rm -rf $A/tuning/logs
rt band 150 --ops all_reduce,reduce_scatter --min 512K --max 4M --iters 100 --warmup 10 --repeat 2 --cycles 3 --configs $C,socket-1x1,socket-2x2
rt bulk 150 --ops all_reduce,reduce_scatter --min 32M --max 256M --iters 10 --warmup 2 --repeat 2 --configs $C,socket-1x1,socket-2x2
rt small 120 --ops all_reduce,all_gather --min 8 --max 64K --iters 200 --warmup 20 --repeat 2 --cycles 3 --configs $C,socket-1x1,socket-2x2
rt gpu 80 --ops all_reduce --min 1M --max 256M --iters 20 --warmup 3 --repeat 2 --configs tcpxr-gpu,tcpxr-gpu+sp,tcpxr-gpu+nt
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
