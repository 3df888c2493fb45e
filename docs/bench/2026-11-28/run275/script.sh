#!/bin/bash
# run275 (2026-11-28, thirty-first session; one GPU, 16 cores): NCCL_TCPXR_BOUNCE_DEMOTE at four
# ranks, build dist/c27 = ef86f48f. 4 ranks on GPU 0 as 4 NCCL hosts under MPS, sendrecv and
# all_reduce 8-512 MiB, 10 iterations, two passes: host buffers, GPU buffers with demote on (the
# default) and off.
cd "$(dirname "$0")/.."; A=/tmp/run275; source dist/common.sh
start_run; echo "c27: $(cat dist/c27/commit.txt)" >> $A/machine.txt
grep -o -w -E "cldemote" /proc/cpuinfo | sort | uniq -c >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
L=dist/c27
CUDA_VISIBLE_DEVICES=0 timeout 480 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir $L --one-gpu --mps --ranks 4 --ops sendrecv,all_reduce --min 8M --max 512M --iters 10 --warmup 3 --timeout 90 --repeat 2 \
  --configs tcpxr-host,tcpxr-gpu,tcpxr-gpu+nd --variant nd:NCCL_TCPXR_BOUNCE_DEMOTE=0 --out $A/s > $A/s.txt 2>&1
el "s rc=$? $(grep -c ' ok, ' $A/s.txt) ok"
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
