#!/bin/bash
# run370 (4x H200, session 45): the spread rule with another count of connections moving. Runs 366
# and 368 found the built rule (M = send comms that sent in the last 1-2 ms) cutting the 4-rank
# all_gather of 8 MiB, which runs on 4 channels where 10 threads / (2 x 4) gives one piece (run
# 369). dist/c68 = 957ce4cf + dist/exp-recent.patch: M = the distinct send comms among the
# process's last 16 striped messages, on by default (128 KiB pieces), against
# NCCL_TCPXR_SPREAD_PIECE_BYTES=0 (off: main) and Socket 2x2 (the instance's control).
# 4 ranks one per GPU: all_reduce, all_gather, reduce_scatter 1-16 MiB; then 2 ranks on GPUs 0-1:
# all_reduce and all_gather 1-16 MiB. 20 iterations, -N 2, three passes alternated, -c 1.
cd "$(dirname "$0")/.."; A=/tmp/run370; source dist/common.sh
start_run; echo "c68: $(cat dist/c68/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
C=(--configs socket-2x2,tcpxr-host,tcpxr-host+off --variant off:NCCL_TCPXR_SPREAD_PIECE_BYTES=0)
CUDA_VISIBLE_DEVICES=0,1,2,3 timeout 170 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c68 --mpirun --ranks 4 --ops all_reduce,all_gather,reduce_scatter --min 1M --max 16M --iters 20 --warmup 5 --cycles 2 --repeat 3 --timeout 45 \
  "${C[@]}" --out $A/r4 > $A/r4.txt 2>&1
el "r4 rc=$? $(grep -c ' ok, ' $A/r4.txt) ok, $(grep -c FAILED $A/r4.txt) failed"
CUDA_VISIBLE_DEVICES=0,1 timeout 80 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c68 --mpirun --ranks 2 --ops all_reduce,all_gather --min 1M --max 16M --iters 20 --warmup 5 --cycles 2 --repeat 3 --timeout 45 \
  "${C[@]}" --out $A/r2 > $A/r2.txt 2>&1
el "r2 rc=$? $(grep -c ' ok, ' $A/r2.txt) ok, $(grep -c FAILED $A/r2.txt) failed"
rm -rf $A/r*/r*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
