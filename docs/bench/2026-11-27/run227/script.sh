#!/bin/bash
# run227 (a 4-GPU host, 64 cores; 2026-11-27, twenty-fifth session): the stripes' 256 KiB window
# (dist/w, 2cb6ea3, NCCL_TCPXR_UNREAD_BYTES=256K) at 2 ranks, GPUs 0-1, for the collectives only
# (run 226: at 4 ranks it made all_gather 32-512 MiB 0.78-0.89x the old time and sendrecv 1.21-
# 1.28x; at 2 ranks a 1 MiB window made all_reduce 1.02-1.13x): all_reduce, all_gather,
# reduce_scatter 256 KiB-512 MiB, 20 iterations, old (a2215065, dist/new) and new A B B A.
cd "$(dirname "$0")/.."; A=/tmp/run227; source dist/common.sh
start_run
{ echo "new: $(cat dist/w/commit.txt)"; echo "old: $(cat dist/new/commit.txt)"; } >> $A/machine.txt
tests_228
r(){ local out=$1 lib=$2; shift 2
  timeout 100 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir $lib --mpirun --ranks 2 --ops all_reduce,all_gather,reduce_scatter --min 256K --max 512M --iters 20 --warmup 5 --timeout 60 --configs tcpxr-host --out $A/$out "$@" > $A/$out.txt 2>&1
  el "$out rc=$? $(grep -c ' ok, ' $A/$out.txt) ok, $(grep -c FAILED $A/$out.txt) failed"; }
W=(--env NCCL_TCPXR_UNREAD_BYTES=256K)
r a1 dist/new; r k1 dist/w "${W[@]}"; r k2 dist/w "${W[@]}"; r a2 dist/new
el done
