#!/bin/bash
# run357 (2x H200, 2 ranks one per GPU; session 42): run 355 cut every message below a chunk into
# 128 KiB pieces: the all_reduce of 2 MiB 8 % faster, the bulk reduce_scatter and all_gather up to
# 27 % slower. The bulk keeps more messages in flight on a connection (NCCL's 8 steps) than the
# band's pipeline: cut only with at most K other messages out (NCCL_TCPXR_EXP_MID_OUT=K;
# dist/c57 = main + exp-mid-out.patch, off by default). all_reduce, all_gather, reduce_scatter
# 512 KiB-16 MiB, 40 iterations, -N 3, three passes alternated: c57 as main, K = 2, 4, against
# Socket 2x2.
cd "$(dirname "$0")/.."; A=/tmp/run357; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0,1; echo "c57: $(cat dist/c57/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
timeout 400 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c57 --mpirun --ranks 2 --ops all_reduce,all_gather,reduce_scatter --min 512K --max 16M --iters 40 --warmup 10 --cycles 3 --timeout 40 --repeat 3 \
  --configs tcpxr-host,tcpxr-host+o2,tcpxr-host+o4,socket-2x2 \
  --variant o2:NCCL_TCPXR_EXP_MID_OUT=2 --variant o4:NCCL_TCPXR_EXP_MID_OUT=4 --out $A/out > $A/out.txt 2>&1
el "out rc=$? $(grep -c ' ok, ' $A/out.txt) ok, $(grep -c FAILED $A/out.txt) failed"
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
