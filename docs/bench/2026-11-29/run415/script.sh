#!/bin/bash
# run415 (one H200, session 51): main's head (dist/c89 = 5d516991; f7852553's code move in the
# send path had not run on a GPU): the GPU test binaries by default, with
# CUDA_DEVICE_MAX_CONNECTIONS=1 and under MPS. Then item 1-2's missing rows on this machine: 2 ranks
# on GPU 0 under MPS, all_gather and reduce_scatter against all four Socket tunings, host buffers;
# 8 B-4 MiB at 100 iterations, -N 3 (steady state), and 8-512 MiB at 10 iterations; two passes
# rotated each.
cd "$(dirname "$0")/.."; A=/tmp/run415; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0
gpu_tests dist/c89
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
C=tcpxr-host,socket,socket-1x1,socket-2x2,socket-4x4
timeout 240 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c89 --one-gpu --mps --ranks 2 --ops all_gather,reduce_scatter --min 8 --max 4M --iters 100 --warmup 10 --cycles 3 --timeout 60 --repeat 2 \
  --configs $C --out $A/small > $A/small.txt 2>&1
el "small rc=$? $(grep -c ' ok, ' $A/small.txt) ok, $(grep -c FAILED $A/small.txt) failed"
timeout 300 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c89 --one-gpu --mps --ranks 2 --ops all_gather,reduce_scatter --min 8M --max 512M --iters 10 --warmup 3 --timeout 90 --repeat 2 \
  --configs $C --out $A/bulk > $A/bulk.txt 2>&1
el "bulk rc=$? $(grep -c ' ok, ' $A/bulk.txt) ok, $(grep -c FAILED $A/bulk.txt) failed"
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
