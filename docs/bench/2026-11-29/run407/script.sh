#!/bin/bash
# run407 (one H200, session 50): main 7b99805f as committed (dist/c85). First GPU run of e78b5317
# (an RMA group's staging as one pinned allocation) and 7b99805f (the arena's access rule): the GPU
# test binaries (default, CUDA_DEVICE_MAX_CONNECTIONS=1, MPS; rma, device_unpack*, gpu_close_held
# by default) and the correctness set (3-4 ranks). Then the last note's item 3: 2 ranks on one H200
# under MPS in steady state where run 406 trailed (all_reduce and sendrecv, 128 KiB-2 MiB), against
# all four Socket tunings, 100 iterations, --cycles 3, two passes.
cd "$(dirname "$0")/.."; A=/tmp/run407; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0
gpu_tests dist/c85
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
checks dist/c85
S=socket,socket-1x1,socket-2x2,socket-4x4
timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c85 --one-gpu --mps --ranks 2 --ops all_reduce,sendrecv --min 128K --max 2M --iters 100 --warmup 10 --cycles 3 --timeout 60 --repeat 2 \
  --configs tcpxr-host,$S --out $A/mid > $A/mid.txt 2>&1
el "mid rc=$? $(grep -c ' ok, ' $A/mid.txt) ok, $(grep -c FAILED $A/mid.txt) failed"
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
