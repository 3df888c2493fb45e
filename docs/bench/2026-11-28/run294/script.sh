#!/bin/bash
# run294 (a 2-GPU host): 1. 8be9ac76 (dist/c35), whose mover skips the demote walk unless a payload
# is flagged: its first GPU run. GPU tests gpu_demote, gpu_copy_in, gpu_hazard by default, with
# CUDA_DEVICE_MAX_CONNECTIONS=1 and under MPS; the 3-4-rank correctness set (checks).
# 2. Item 1's smallest sizes at 2 ranks one per GPU: does the number of channels tcpxr has NCCL
# build (8) cost the 2-3 us a message? all_reduce and sendrecv 8 B-1 KiB, 2000 iterations, five
# passes: tcpxr, tcpxr with NCCL_MIN_NCHANNELS=2 and =4, Socket default and 1x1.
# 3. What 4 channels would cost the mid band and bulk: all_reduce and all_gather 128 KiB-512 MiB,
# 20 iterations, two passes, tcpxr against tcpxr with NCCL_MIN_NCHANNELS=4.
cd "$(dirname "$0")/.."; A=/tmp/run294; source dist/common.sh
start_run; echo "c35: $(cat dist/c35/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
export TCPXR_REQUIRE_GPU=1
for t in gpu_demote gpu_copy_in gpu_hazard; do
  CUDA_VISIBLE_DEVICES=0 timeout 60 dist/c35/deps/$t --include-ignored --test-threads=1 > $A/$t-default.txt 2>&1; el "$t default rc=$? $(grep -h '^test result' $A/$t-default.txt)"
  CUDA_VISIBLE_DEVICES=0 CUDA_DEVICE_MAX_CONNECTIONS=1 timeout 60 dist/c35/deps/$t --include-ignored --test-threads=1 > $A/$t-1queue.txt 2>&1; el "$t one queue rc=$? $(grep -h '^test result' $A/$t-1queue.txt)"
  mps_on; CUDA_VISIBLE_DEVICES=0 timeout 60 dist/c35/deps/$t --include-ignored --test-threads=1 > $A/$t-mps.txt 2>&1; el "$t MPS rc=$? $(grep -h '^test result' $A/$t-mps.txt)"; mps_off
done
unset TCPXR_REQUIRE_GPU
checks dist/c35
CUDA_VISIBLE_DEVICES=0,1 timeout 240 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c35 --mpirun --ranks 2 --ops all_reduce,sendrecv --min 8 --max 1K --iters 2000 --warmup 100 --timeout 60 --repeat 5 \
  --configs tcpxr-host,tcpxr-host+c2,tcpxr-host+c4,socket,socket-1x1 --variant c2:NCCL_MIN_NCHANNELS=2 --variant c4:NCCL_MIN_NCHANNELS=4 --out $A/l > $A/l.txt 2>&1
el "l rc=$? $(grep -c ' ok, ' $A/l.txt) ok, $(grep -c FAILED $A/l.txt) failed"
CUDA_VISIBLE_DEVICES=0,1 timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c35 --mpirun --ranks 2 --ops all_reduce,all_gather --min 128K --max 512M --iters 20 --warmup 5 --timeout 60 --repeat 2 \
  --configs tcpxr-host,tcpxr-host+c4 --variant c4:NCCL_MIN_NCHANNELS=4 --out $A/b > $A/b.txt 2>&1
el "b rc=$? $(grep -c ' ok, ' $A/b.txt) ok, $(grep -c FAILED $A/b.txt) failed"
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
