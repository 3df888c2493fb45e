#!/bin/bash
# run327 (one H200, 16 cores: no multi-GPU host was lent; 2026-11-28, thirty-ninth session):
# issue 31 items 1, 2 and 5 in the shape the issue names where no 4-GPU host is lent: 4 ranks on
# GPU 0 under MPS, each its own NCCL host, host buffers, main (dist/c49 = ba328017: lo at 10 Gb/s
# with host buffers) against itself with the old report (NCCL_TCPXR_SPEED_MBPS=400000) and all
# four Socket tunings; all_reduce and sendrecv 8 B-512 MiB, 10 iterations, two passes in rotated
# order (run 150 last measured this shape against all four, to 256 MiB, on fe5bc84).
cd "$(dirname "$0")/.."; A=/tmp/run327; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c49: $(cat dist/c49/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
S=socket,socket-1x1,socket-2x2,socket-4x4
timeout 330 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c49 --one-gpu --mps --ranks 4 --ops all_reduce --min 8 --max 512M --iters 10 --warmup 3 --timeout 60 --repeat 2 \
  --configs tcpxr-host,tcpxr-host+old,$S --variant old:NCCL_TCPXR_SPEED_MBPS=400000 --out $A/ar4 > $A/ar4.txt 2>&1
el "ar4 rc=$? $(grep -c ' ok, ' $A/ar4.txt) ok, $(grep -c FAILED $A/ar4.txt) failed"
timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c49 --one-gpu --mps --ranks 4 --ops sendrecv --min 8 --max 512M --iters 10 --warmup 3 --timeout 60 --repeat 2 \
  --configs tcpxr-host,$S --out $A/sr4 > $A/sr4.txt 2>&1
el "sr4 rc=$? $(grep -c ' ok, ' $A/sr4.txt) ok, $(grep -c FAILED $A/sr4.txt) failed"
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
