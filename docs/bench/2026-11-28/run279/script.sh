#!/bin/bash
# run279 (a 4-GPU host, 64 cores; 2026-11-28, thirty-second session): item 4 with the bounce
# demote acting (e16543bc; main 04fef03a, dist/c30), where run 278 measured only 2-rank sendrecv:
# 4 ranks one per GPU, sendrecv and all_reduce 8-512 MiB, host buffers, GPU buffers, GPU buffers
# with NCCL_TCPXR_BOUNCE_DEMOTE=0, three passes in rotated order; all_gather and reduce_scatter the
# same, two passes; 2 ranks (GPUs 0-1) all_reduce, all_gather, reduce_scatter the same, two
# passes (NCCL's kernel reads the bounce pages there, not the copy engine). 10 iterations, -c 1.
cd "$(dirname "$0")/.."; A=/tmp/run279; source dist/common.sh
start_run; echo "c30: $(cat dist/c30/commit.txt)" >> $A/machine.txt
grep -o -w cldemote /proc/cpuinfo | sort | uniq -c >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
L=dist/c30
t(){ local out=$1 ranks=$2 ops=$3 rep=$4 lim=$5
  timeout $lim python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir $L --mpirun --ranks $ranks --ops $ops --min 8M --max 512M --iters 10 --warmup 3 --timeout 60 --repeat $rep \
    --configs tcpxr-host,tcpxr-gpu,tcpxr-gpu+nd --variant nd:NCCL_TCPXR_BOUNCE_DEMOTE=0 --out $A/$out > $A/$out.txt 2>&1
  el "$out rc=$? $(grep -c ' ok, ' $A/$out.txt) ok, $(grep -c FAILED $A/$out.txt) failed"; }
t g4 4 sendrecv,all_reduce 3 200
t c4 4 all_gather,reduce_scatter 2 130
CUDA_VISIBLE_DEVICES=0,1 t c2 2 all_reduce,all_gather,reduce_scatter 2 150
for f in $A/*/r*/logs/*.tcpxr-gpu*; do echo "$(echo $f | sed "s#$A/##"): $(grep -ho 'copies into GPU memory.*' $f | head -1) $(grep -ho '[0-9.]* MB demoted.*' $f | head -1)"; done > $A/copy-counters.txt 2>&1
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
