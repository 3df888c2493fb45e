#!/bin/bash
# run347 (2x H200, 32 cores): run 346 left one place below 1.0 at 2 ranks one per GPU in the band,
# all_reduce of 1-2 MiB (0.85-0.93 by medians: 242-364 us against Socket 2x2's 230-309), which
# the tuner's row runs in the ring's Simple on at most 2 channels (a 256 KiB-2 MiB share). More
# channels there, with 32 cores for 2 ranks: main's head (dist/c53) at its defaults; with
# NCCL_MAX_NCHANNELS=4 (the row's ring Simple, NCCL's own count of up to 4 built); with 8 built
# and NCCL's own count (NCCL_MIN_NCHANNELS=8 NCCL_MAX_NCHANNELS=8); with NCCL_TCPXR_TUNER=0
# (NCCL's choices throughout); against Socket 1x1, 2x2, 4x4 (default never wins there, run 346).
# all_reduce 512 KiB-4 MiB, 40 iterations, -N 3, three passes alternated; TUNING log of pass 1.
cd "$(dirname "$0")/.."; A=/tmp/run347; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0,1; echo "c53: $(cat dist/c53/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
timeout 400 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c53 --mpirun --ranks 2 --ops all_reduce --min 512K --max 4M --iters 40 --warmup 10 --cycles 3 --timeout 40 --repeat 3 \
  --configs tcpxr-host,tcpxr-host+max4,tcpxr-host+own8,tcpxr-host+notuner,socket-1x1,socket-2x2,socket-4x4 --env NCCL_DEBUG_SUBSYS=INIT,NET,TUNING \
  --variant max4:NCCL_MAX_NCHANNELS=4 --variant own8:NCCL_MIN_NCHANNELS=8 --variant own8:NCCL_MAX_NCHANNELS=8 --variant notuner:NCCL_TCPXR_TUNER=0 --out $A/ch > $A/ch.txt 2>&1
el "ch rc=$? $(grep -c ' ok, ' $A/ch.txt) ok, $(grep -c FAILED $A/ch.txt) failed"
for f in $A/ch/r1/logs/all_reduce.*; do echo "$f"; done | sed 's#.*/all_reduce\.\([^.]*\)\..*#\1#' | sort -u | while read c; do
  echo "$c: $(grep -h 'AllReduce:' $A/ch/r1/logs/all_reduce.$c.* | sed 's/^.*NCCL INFO //' | awk '{print $2, $6, $8, $9}' | sort -u | sort -n | paste -sd';')"
done > $A/tuning.txt
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
