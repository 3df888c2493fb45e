#!/bin/bash
# run230 (a 4-GPU host, 64 cores; 2026-11-27, twenty-sixth session): the growing window (256 KiB
# growing to 4 MiB, dist/w3) where run 229 did not look. 2 ranks one per GPU (GPUs 0-1):
# all_reduce, all_gather, reduce_scatter, sendrecv 256 KiB-512 MiB, 10 iterations, no window and
# 256K->4M in the order A B B A (run 227 had a fixed 256 KiB window cost 2-rank all_reduce and
# reduce_scatter 7-15 %). 4 ranks: reduce_scatter 1-512 MiB, A B B A. Then correctness with the
# growing window: 4 ranks one per GPU, all_reduce and sendrecv 8 B-32 MiB -c 1, host and GPU
# buffers, NCCL's choice, Ring, Tree; 3 ranks (GPUs 0-2) with NCCL's choice.
# dist/w3: built from 197dd744, a working commit whose code became 89b66c2 (whose tests and
# comments came after the run; the code is the same).
cd "$(dirname "$0")/.."; A=/tmp/run230; source dist/common.sh
start_run
{ echo "new: $(cat dist/w3/commit.txt)"; } >> $A/machine.txt
tests_228
declare -A LO=([none]=0 [g4M]=256K) HI=([none]=0 [g4M]=4M)
r(){ local out=$1 c=$2 np=$3 ops=$4 min=$5; shift 5
  timeout 240 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/w3 --mpirun --ranks $np --ops $ops --min $min --max 512M --iters 10 --warmup 3 --timeout 80 --configs tcpxr-host --env NCCL_TCPXR_UNREAD_BYTES=${LO[$c]} --env NCCL_TCPXR_UNREAD_MAX_BYTES=${HI[$c]} "$@" --out $A/$out > $A/$out.txt 2>&1
  el "$out rc=$? $(grep -c ' ok, ' $A/$out.txt) ok"; }
i=0; for c in none g4M g4M none; do i=$((i+1)); r t$i-$c $c 2 all_reduce,all_gather,reduce_scatter,sendrecv 256K; done
i=0; for c in none g4M g4M none; do i=$((i+1)); r q$i-$c $c 4 reduce_scatter 1M; done
for algo in NCCL Ring Tree; do
  al=(); [ $algo != NCCL ] && al=(--algo $algo)
  timeout 150 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/w3 --mpirun --ranks 4 "${al[@]}" --ops all_reduce,sendrecv --configs tcpxr-host,tcpxr-gpu --max 32M --iters 2 --warmup 1 --timeout 60 --env NCCL_TCPXR_UNREAD_BYTES=256K --env NCCL_TCPXR_UNREAD_MAX_BYTES=4M --out $A/check-4-$algo > $A/check-4-$algo.txt 2>&1
  el "check 4 ranks $algo rc=$? $(grep -c ' ok, ' $A/check-4-$algo.txt) ok, $(grep -c FAILED $A/check-4-$algo.txt) failed"
done
timeout 150 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/w3 --mpirun --ranks 3 --ops all_reduce,sendrecv --configs tcpxr-host,tcpxr-gpu --max 32M --iters 2 --warmup 1 --timeout 60 --env NCCL_TCPXR_UNREAD_BYTES=256K --env NCCL_TCPXR_UNREAD_MAX_BYTES=4M --out $A/check-3-NCCL > $A/check-3-NCCL.txt 2>&1
el "check 3 ranks NCCL rc=$? $(grep -c ' ok, ' $A/check-3-NCCL.txt) ok, $(grep -c FAILED $A/check-3-NCCL.txt) failed"
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
