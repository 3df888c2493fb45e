#!/bin/bash
# run289 (a 2-GPU host): 1. tests/gpu_demote.rs of 8adbc164 (dist/c34; library as 39b4bd9b):
# default, CUDA_DEVICE_MAX_CONNECTIONS=1, MPS. 2. Item 1's smallest sizes at 2 ranks one per GPU,
# where tcpxr trailed Socket by 2-5 us on the same ring LL channel (runs 287-288): all_reduce and
# sendrecv 8 B-1 KiB, 2000 iterations, host buffers, three passes: tcpxr, tcpxr without its tuner
# (NCCL_TCPXR_TUNER=0), tcpxr with 2 channels built (NCCL_MIN_NCHANNELS=2, not tcpxr's 8), Socket
# default and 1x1.
cd "$(dirname "$0")/.."; A=/tmp/run289; source dist/common.sh
start_run; echo "c34: $(cat dist/c34/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
export TCPXR_REQUIRE_GPU=1
t=gpu_demote
CUDA_VISIBLE_DEVICES=0 timeout 60 dist/c34/deps/$t --include-ignored --test-threads=1 > $A/$t-default.txt 2>&1; el "$t default rc=$? $(grep -h '^test result' $A/$t-default.txt)"
CUDA_VISIBLE_DEVICES=0 CUDA_DEVICE_MAX_CONNECTIONS=1 timeout 60 dist/c34/deps/$t --include-ignored --test-threads=1 > $A/$t-1queue.txt 2>&1; el "$t one queue rc=$? $(grep -h '^test result' $A/$t-1queue.txt)"
mps_on; CUDA_VISIBLE_DEVICES=0 timeout 60 dist/c34/deps/$t --include-ignored --test-threads=1 > $A/$t-mps.txt 2>&1; el "$t MPS rc=$? $(grep -h '^test result' $A/$t-mps.txt)"; mps_off
unset TCPXR_REQUIRE_GPU
CUDA_VISIBLE_DEVICES=0,1 timeout 300 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c34 --mpirun --ranks 2 --ops all_reduce,sendrecv --min 8 --max 1K --iters 2000 --warmup 100 --timeout 60 --repeat 3 \
  --configs tcpxr-host,tcpxr-host+t0,tcpxr-host+c2,socket,socket-1x1 --variant t0:NCCL_TCPXR_TUNER=0 --variant c2:NCCL_MIN_NCHANNELS=2 --out $A/l > $A/l.txt 2>&1
el "l rc=$? $(grep -c ' ok, ' $A/l.txt) ok, $(grep -c FAILED $A/l.txt) failed"
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
