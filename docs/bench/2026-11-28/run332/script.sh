#!/bin/bash
# run332 (2x H200, 32 cores; 2026-11-28, thirty-ninth session): run 331's bulk pass (one cycle of
# 8-512 MiB in each process, 10 iterations) had tcpxr's all_reduce of 8-16 MiB at 1163-2656 us
# where run 324 (sweeps from 256 KiB, 20 iterations) had 707-1131: a first-use cost or the
# instance? all_reduce 8-64 MiB, 2 ranks one per GPU, host buffers, main (dist/c49 = ba328017)
# against Socket 1x1 and 2x2, 10 iterations, -N 3 (the first cycle and the steady state), two passes.
cd "$(dirname "$0")/.."; A=/tmp/run332; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0,1; echo "c49: $(cat dist/c49/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
timeout 120 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c49 --mpirun --ranks 2 --ops all_reduce --min 8M --max 64M --iters 10 --warmup 3 --cycles 3 --timeout 30 --repeat 2 \
  --configs tcpxr-host,socket-1x1,socket-2x2 --out $A/ar > $A/ar.txt 2>&1
el "ar rc=$? $(grep -c ' ok, ' $A/ar.txt) ok, $(grep -c FAILED $A/ar.txt) failed"
rm -rf $A/*/r*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
