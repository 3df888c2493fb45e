#!/bin/bash
# run328 (one H200, 16 cores, the sequel of run327 on the same instance where it stays warm):
# all_gather and reduce_scatter 8 B-512 MiB at 4 ranks on GPU 0 under MPS, main (dist/c49 =
# ba328017) against all four Socket tunings (the old report left out for time),
# 10 iterations, two passes in rotated order; and item 5 for two ranks on GPU 0 under MPS, where
# run 324 found all_reduce of 8-32 MiB 5-7 % slower on lo at 10 Gb/s: c49 against old, 2-64 MiB,
# 20 iterations, two passes.
cd "$(dirname "$0")/.."; A=/tmp/run328; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c49: $(cat dist/c49/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
S=socket,socket-1x1,socket-2x2,socket-4x4
timeout 420 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c49 --one-gpu --mps --ranks 4 --ops all_gather,reduce_scatter --min 8 --max 512M --iters 10 --warmup 3 --timeout 60 --repeat 2 \
  --configs tcpxr-host,$S --out $A/ag4 > $A/ag4.txt 2>&1
el "ag4 rc=$? $(grep -c ' ok, ' $A/ag4.txt) ok, $(grep -c FAILED $A/ag4.txt) failed"
timeout 150 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c49 --one-gpu --mps --ranks 2 --ops all_reduce --min 2M --max 64M --iters 20 --warmup 5 --timeout 40 --repeat 2 \
  --configs tcpxr-host,tcpxr-host+old --variant old:NCCL_TCPXR_SPEED_MBPS=400000 --out $A/ar2 > $A/ar2.txt 2>&1
el "ar2 rc=$? $(grep -c ' ok, ' $A/ar2.txt) ok, $(grep -c FAILED $A/ar2.txt) failed"
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
