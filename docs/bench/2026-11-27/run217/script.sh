#!/bin/bash
# run217 (a 4-GPU host, 64 cores; 2026-11-27, twenty-fourth session): does cutting messages finer
# shorten the 4-rank band (run 216's medians: all_reduce 1-16 MiB 0.83-0.88 of Socket's best)?
# Run 191 cut only nearly idle messages and at 4 ranks its instance's spread hid any effect; here by
# medians of three passes. tcpxr (dist/new, a2215065) at its defaults (D: ring connections keep 512
# KiB chunks), with NCCL_TCPXR_IDLE_CHUNK_BYTES=64K (I: a nearly idle connection's message cut into
# one piece a stripe, none below 64 KiB, on every connection) and NCCL_TCPXR_CHUNK_BYTES=128K (C:
# every message in 128 KiB chunks). all_reduce, all_gather, reduce_scatter 256 KiB-16 MiB, 50
# iterations; 4 ranks one per GPU, then 2 ranks on GPUs 0-1 (item 5: the 2-rank cost); passes
# D I C, I C D, C D I.
cd "$(dirname "$0")/.."; A=/tmp/run217; source dist/common.sh
start_run
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 48
r(){ local out=$1 np=$2; shift 2
  timeout 120 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/new --mpirun --ranks $np --ops all_reduce,all_gather,reduce_scatter --min 256K --max 16M --iters 50 --warmup 10 --timeout 60 --configs tcpxr-host --out $A/$out "$@" > $A/$out.txt 2>&1
  el "$out rc=$? $(grep -c ' ok, ' $A/$out.txt) ok, $(grep -c FAILED $A/$out.txt) failed"; }
v(){ local k=$1 np=$2 x=$3
  case $x in D) r d$np-$k $np;; I) r i$np-$k $np --env NCCL_TCPXR_IDLE_CHUNK_BYTES=64K;; C) r c$np-$k $np --env NCCL_TCPXR_CHUNK_BYTES=128K;; esac; }
k=0; for order in "D I C" "I C D" "C D I"; do k=$((k+1))
  for np in 4 2; do for x in $order; do v $k $np $x; done; done
done
el done
