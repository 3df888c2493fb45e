#!/bin/bash
# run330 (one H200, 16 cores; 2026-11-28, thirty-ninth session): item 3 in the 4-ranks-on-one-GPU
# shape. Run 329's ring (tcpxr-bench ring, 4 processes) moved 15.4-15.7 GB/s through tcpxr's 2 I/O
# threads a rank on 2 channels, plain TCP 20-21 with 2 connections a rank and 31-32 with 4: does a
# larger pool move NCCL's bulk faster there? 4 ranks on GPU 0 under MPS, host buffers, main
# (dist/c49 = ba328017; its pool rule gives 16 cores / 4 ranks - 2 = 2 threads, and 2 threads cap
# the collectives at 2 channels) against NCCL_TCPXR_IO_THREADS=3 and 4 (8 channels: no cap) and
# the same on 2 channels (NCCL_MIN/MAX_NCHANNELS=2 with NCCL_TCPXR_SPEED_MBPS=10000, the ring's
# Simple on 256 threads as main); all_reduce and all_gather 16-512 MiB, 10 iterations, two passes.
cd "$(dirname "$0")/.."; A=/tmp/run330; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c49: $(cat dist/c49/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
V=(--variant t3:NCCL_TCPXR_IO_THREADS=3 --variant t4:NCCL_TCPXR_IO_THREADS=4)
for t in 3 4; do V+=(--variant t${t}c2:NCCL_TCPXR_IO_THREADS=$t --variant t${t}c2:NCCL_MIN_NCHANNELS=2 --variant t${t}c2:NCCL_MAX_NCHANNELS=2 --variant t${t}c2:NCCL_TCPXR_SPEED_MBPS=10000); done
timeout 420 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c49 --one-gpu --mps --ranks 4 --ops all_reduce,all_gather --min 16M --max 512M --iters 10 --warmup 3 --timeout 60 --repeat 2 \
  --configs tcpxr-host,tcpxr-host+t3,tcpxr-host+t4,tcpxr-host+t3c2,tcpxr-host+t4c2 "${V[@]}" --out $A/pool > $A/pool.txt 2>&1
el "pool rc=$? $(grep -c ' ok, ' $A/pool.txt) ok, $(grep -c FAILED $A/pool.txt) failed"
grep -h 'I/O pool\|IO_THREADS =\|channels' $A/pool/r1/logs/* 2>/dev/null | sed 's/^.*NCCL INFO //' | sort | uniq -c | head -40 > $A/pool-lines.txt
rm -rf $A/*/r*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
