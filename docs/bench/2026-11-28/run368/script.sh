#!/bin/bash
# run368 (4x H200, session 45): run 366 again at 4 ranks one per GPU, where its instance spread
# passes of one config up to 3x and left the spread rule's effect unclear (all_gather of 8 MiB
# 1122-1152 us with it in every pass against 766-1015 without; run 365's first form was faster
# at 4 ranks in every pass). dist/c66 (spread on, 128 KiB pieces) against
# NCCL_TCPXR_SPREAD_PIECE_BYTES=0 (off) and Socket 2x2 (the instance's control), all_reduce,
# all_gather, reduce_scatter 1-16 MiB, 20 iterations, -N 2, four passes alternated.
cd "$(dirname "$0")/.."; A=/tmp/run368; source dist/common.sh
start_run; echo "c66: $(cat dist/c66/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
CUDA_VISIBLE_DEVICES=0,1,2,3 timeout 330 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c66 --mpirun --ranks 4 --ops all_reduce,all_gather,reduce_scatter --min 1M --max 16M --iters 20 --warmup 5 --cycles 2 --repeat 4 --timeout 45 \
  --configs socket-2x2,tcpxr-host,tcpxr-host+off --variant off:NCCL_TCPXR_SPREAD_PIECE_BYTES=0 --out $A/r4 > $A/r4.txt 2>&1
el "r4 rc=$? $(grep -c ' ok, ' $A/r4.txt) ok, $(grep -c FAILED $A/r4.txt) failed"
rm -rf $A/r*/r*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
