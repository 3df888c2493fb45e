#!/bin/bash
# run406 (one H200, session 49): issue 31's items 1-2 for 2 ranks on one H200 under MPS (the
# issue's "2 ranks on one GPU" row: 512 KiB 0.78, 2 MiB 0.93, sendrecv 8-128 B 0.89-0.92 on
# 63c4898) with main a7e24060's library (dist/c84; host buffers): all_reduce and sendrecv, 8 B-
# 512 MiB, against all four Socket tunings, 10 iterations, two passes (run_nccl_tests.py
# --repeat 2: medians per size).
cd "$(dirname "$0")/.."; A=/tmp/run406; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
S=socket,socket-1x1,socket-2x2,socket-4x4
timeout 330 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c84 --one-gpu --mps --ranks 2 --ops all_reduce,sendrecv --min 8 --max 512M --iters 10 --warmup 3 --timeout 60 --repeat 2 \
  --configs tcpxr-host,$S --out $A/two > $A/two.txt 2>&1
el "two rc=$? $(grep -c ' ok, ' $A/two.txt) ok, $(grep -c FAILED $A/two.txt) failed"
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
