#!/bin/bash
# run268 (a 2-GPU host, 32 cores; 2026-11-27, thirtieth session): item 4, run 267's hold across
# sizes: sendrecv 8-512 MiB, 2 ranks one per GPU, 10 iterations, dist/c23 (c2783b9e +
# exp-copy-delay.patch) with GPU buffers and TCPXR_EXP_COPY_DELAY_US 0, 100, 150, 250, and host
# buffers; one pass, the runner's order.
cd "$(dirname "$0")/.."; A=/tmp/run268; source dist/common.sh
start_run; echo "c23: $(cat dist/c23/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
CUDA_VISIBLE_DEVICES=0,1 timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c23 --mpirun --ranks 2 --ops sendrecv --min 8M --max 512M --iters 10 --warmup 3 --timeout 60 \
  --configs tcpxr-host,tcpxr-gpu,tcpxr-gpu+h100,tcpxr-gpu+h150,tcpxr-gpu+h250 --variant h100:TCPXR_EXP_COPY_DELAY_US=100 --variant h150:TCPXR_EXP_COPY_DELAY_US=150 --variant h250:TCPXR_EXP_COPY_DELAY_US=250 --out $A/s > $A/s.txt 2>&1
el "s rc=$? $(grep -c ' ok, ' $A/s.txt) ok"
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
