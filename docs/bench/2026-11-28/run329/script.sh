#!/bin/bash
# run329 (one H200, 16 cores; 2026-11-28, thirty-ninth session), after runs 327-328 (4 ranks on
# GPU 0 under MPS, main = dist/c49 = ba328017):
#  tune: NCCL's choices (TUNING, 2 iterations) for all_reduce 1-16 KiB at 4 ranks on GPU 0 under
#        MPS, c49 and c49 with the old report (NCCL_TCPXR_SPEED_MBPS=400000): run 327 found 2 KiB
#        slower on lo at 10 Gb/s (85-90 us against 68-71 in both passes);
#  small: the same sizes timed, 200 iterations, -N 3 (steady state), three passes;
#  ring: item 3 in this shape: tcpxr-bench ring, 4 processes on the 16 cores, tcpxr on 2 channels
#        (the pool's cap there) beside plain TCP with 1, 2 and 4 connections a rank, 4 and 64 MiB.
cd "$(dirname "$0")/.."; A=/tmp/run329; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c49: $(cat dist/c49/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
OLD=old:NCCL_TCPXR_SPEED_MBPS=400000
timeout 60 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c49 --one-gpu --mps --ranks 4 --ops all_reduce --min 1K --max 16K --iters 2 --warmup 1 --timeout 25 \
  --configs tcpxr-host,tcpxr-host+old --variant $OLD --env NCCL_DEBUG_SUBSYS=INIT,NET,TUNING --out $A/tune > $A/tune.txt 2>&1
el "tune rc=$? $(grep -c ' ok, ' $A/tune.txt) ok"
for c in tcpxr-host tcpxr-host+old; do grep -h "AllReduce:" $A/tune/logs/all_reduce.$c.* | sed 's/^.*NCCL INFO //' | sort | uniq -c > $A/tune-$c.txt; done
grep -h "Max NThreads\|threadThresholds\|tcpxr.*cap\|tuner" $A/tune/logs/all_reduce.tcpxr-host.nccl.0* | sed 's/^.*NCCL INFO //' | sort | uniq -c | head -40 > $A/tune-misc.txt
timeout 150 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c49 --one-gpu --mps --ranks 4 --ops all_reduce --min 1K --max 16K --iters 200 --warmup 20 --cycles 3 --timeout 40 --repeat 3 \
  --configs tcpxr-host,tcpxr-host+old,socket --variant $OLD --out $A/small > $A/small.txt 2>&1
el "small rc=$? $(grep -c ' ok, ' $A/small.txt) ok, $(grep -c FAILED $A/small.txt) failed"
for s in 4M 64M; do
  timeout 100 dist/c49/tcpxr-bench ring --ranks 4 --channels 2 --size $s --seconds 3 --tcp-connections 1,2,4 > $A/ring-$s.txt 2>&1
  el "ring $s rc=$? $(grep -a -E '^ +(tcpxr|tcp x[0-9]+) +all' $A/ring-$s.txt | tr -s ' ' | paste -sd';')"
done
rm -rf $A/*/r*/logs $A/small/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
