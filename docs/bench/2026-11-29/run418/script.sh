#!/bin/bash
# run418 (one H200, session 51), main's head's library dist/c89 = 5d516991 (f7852553 moved the
# send path's decisions into one function; its GPU test binaries passed in run 415):
#  checks: the correctness set (3 and 4 ranks on GPU 0 under MPS, host and GPU buffers, NCCL's
#          choice, Ring and Tree; 4 ranks, GPU buffers, CUDA_DEVICE_MAX_CONNECTIONS=1), with all
#          four ops.
#  four:   item 2 at 4 ranks on this machine (last measured in runs 327-328 on ba328017): the
#          three collectives 4-64 MiB in steady state, 20 iterations, -N 2, one pass, against
#          Socket's four tunings.
cd "$(dirname "$0")/.."; A=/tmp/run418; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
checks dist/c89 all_reduce,all_gather,reduce_scatter,sendrecv
timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c89 --one-gpu --mps --ranks 4 --ops all_reduce,all_gather,reduce_scatter --min 4M --max 64M --iters 20 --warmup 3 --cycles 2 --timeout 60 \
  --configs tcpxr-host,socket,socket-1x1,socket-2x2,socket-4x4 --out $A/four > $A/four.txt 2>&1
el "four rc=$? $(grep -c ' ok, ' $A/four.txt) ok, $(grep -c FAILED $A/four.txt) failed"
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
