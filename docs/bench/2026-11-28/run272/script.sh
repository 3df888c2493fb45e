#!/bin/bash
# run272 (2026-11-28, thirty-first session; a 2-GPU host): item 4 without a clock. Experiment
# build dist/c26 = copy-hold eb2754d7 + exp-demote.patch: after each socket read the I/O thread
# pushes the lines it wrote out of its caches (TCPXR_EXP_DEMOTE=1 cldemote, 2 clflushopt), so the
# copy engine's read does not snoop the writer's L2 (the cause runs 262-268 named). 2 ranks one
# per GPU, sendrecv 8-512 MiB, 10 iterations, three passes: host buffers with and without cldemote,
# GPU buffers copying at once, with the 100 us hold, with cldemote, with clflushopt.
cd "$(dirname "$0")/.."; A=/tmp/run272; source dist/common.sh
start_run; echo "c26: $(cat dist/c26/commit.txt)" >> $A/machine.txt
grep -o -w -E "cldemote|clflushopt" /proc/cpuinfo | sort | uniq -c >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
L=dist/c26
CUDA_VISIBLE_DEVICES=0,1 timeout 520 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir $L --mpirun --ranks 2 --ops sendrecv --min 8M --max 512M --iters 10 --warmup 3 --timeout 60 --repeat 3 \
  --configs tcpxr-host,tcpxr-host+d1,tcpxr-gpu,tcpxr-gpu+h100,tcpxr-gpu+d1,tcpxr-gpu+d2 --variant h100:NCCL_TCPXR_GPU_COPY_HOLD_US=100 --variant d1:TCPXR_EXP_DEMOTE=1 --variant d2:TCPXR_EXP_DEMOTE=2 --out $A/s > $A/s.txt 2>&1
el "s rc=$? $(grep -c ' ok, ' $A/s.txt) ok"
for f in $A/s/r*/logs/sendrecv.tcpxr-*; do echo "$(echo $f | sed "s#$A/##"): $(grep -ho 'TCPXR_EXP_DEMOTE.*' $f | head -1) $(grep -ho 'copies into GPU memory.*' $f | head -1)"; done > $A/copy-counters.txt 2>&1
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
