#!/bin/bash
# run331 (2x H200, 32 cores, lent for a while in the thirty-ninth session, 2026-11-28): issue 31 at
# 2 ranks one per GPU on main (dist/c49 = ba328017: lo at 10 Gb/s with host buffers), host buffers:
#  bulk: items 1-2 against all four Socket tunings, all_reduce, all_gather, reduce_scatter and
#        sendrecv 8-512 MiB, 10 iterations, one pass (run 324 had Socket 1x1 and 2x2 only);
#  small: item 5 and item 1 at the sizes run 324 did not measure: 8 B-512 KiB, the four ops, c49
#        against its old report (NCCL_TCPXR_SPEED_MBPS=400000) and Socket default and 1x1 (the
#        two that win there), 200 iterations, -N 3 (steady state), two passes.
cd "$(dirname "$0")/.."; A=/tmp/run331; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0,1; echo "c49: $(cat dist/c49/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
O=all_reduce,all_gather,reduce_scatter,sendrecv
timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c49 --mpirun --ranks 2 --ops $O --min 8M --max 512M --iters 10 --warmup 3 --timeout 40 \
  --configs tcpxr-host,socket,socket-1x1,socket-2x2,socket-4x4 --out $A/bulk > $A/bulk.txt 2>&1
el "bulk rc=$? $(grep -c ' ok, ' $A/bulk.txt) ok, $(grep -c FAILED $A/bulk.txt) failed"
timeout 230 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c49 --mpirun --ranks 2 --ops $O --min 8 --max 512K --iters 200 --warmup 20 --cycles 3 --timeout 30 --repeat 2 \
  --configs tcpxr-host,tcpxr-host+old,socket,socket-1x1 --variant old:NCCL_TCPXR_SPEED_MBPS=400000 --out $A/small > $A/small.txt 2>&1
el "small rc=$? $(grep -c ' ok, ' $A/small.txt) ok, $(grep -c FAILED $A/small.txt) failed"
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
