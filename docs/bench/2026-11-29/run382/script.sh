#!/bin/bash
# run382 (2x H200, session 47): the spread rule cutting in at least 2 pieces while every moving
# comm has 2 of the pool's threads (dist/c75 = main ce274da9 + dist/exp-spread-min2.patch,
# TCPXR_EXP_SPREAD_MIN2=1: pieces = max(threads / (2 x moving), 2) where moving <= threads / 2;
# with the pool's 10 threads that cuts in 2 where 3-5 comms move, and leaves 2 moving comms at
# their 2 pieces). Run 381's TCPXR_TEST_SPREAD_THREADS=16 took the 2-rank all_gather of 1 MiB
# 0.94-1.00x in every pass but the all_reduce of 2-4 MiB 1.01-1.20x (where 2 comms move: 4 pieces
# instead of 2); this keeps the second as it is. 2 ranks one per GPU, all_reduce, all_gather,
# reduce_scatter 512 KiB-4 MiB, 20 iterations, -N 2, three passes, against Socket 2x2.
cd "$(dirname "$0")/.."; A=/tmp/run382; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0,1; echo "c75: $(cat dist/c75/commit.txt)" >> $A/machine.txt
build_tests_in /tmp/nt-2.28.3 /usr 32; NT=/tmp/nt-2.28.3/build
C=(--configs socket-2x2,tcpxr-host,tcpxr-host+min2 --variant min2:TCPXR_EXP_SPREAD_MIN2=1)
timeout 300 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c75 --mpirun --ranks 2 --ops all_reduce,all_gather,reduce_scatter --min 512K --max 4M --iters 20 --warmup 5 --cycles 2 --repeat 3 --timeout 45 \
  "${C[@]}" --out $A/r2 > $A/r2.txt 2>&1
el "r2 rc=$? $(grep -c ' ok, ' $A/r2.txt) ok, $(grep -c FAILED $A/r2.txt) failed"
grep -o '[a-z_]* tcpxr-host[+a-z0-9]*: [^|]*spread cut [^|]*' $A/r2/summary.md | grep -o '^[a-z_]* tcpxr-host[+a-z0-9]*\|spread cut [0-9]* of [0-9]*' | paste - - | tee -a $A/steps.txt
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
