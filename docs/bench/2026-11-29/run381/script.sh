#!/bin/bash
# run381 (2x H200, session 47): the 2-rank half of run 374's two ways to cut more with the spread
# rule, main's library (dist/c73 = 05d248cb; ef94fc1b and c5b584f1 change docs only), against
# Socket 1x1 and 2x2 (the tunings that win at 512 KiB-4 MiB), 20 iterations, -N 2, -c 1:
#  +t16: TCPXR_TEST_SPREAD_THREADS=16 (a test seam the rule reads in place of the pool's threads);
#  +p32: NCCL_TCPXR_SPREAD_PIECE_BYTES=32K (pieces of 32 KiB instead of 64).
#  2 ranks one per GPU, all_reduce, all_gather, reduce_scatter 512 KiB-4 MiB, three passes
#  (run 373: all_reduce 1 MiB 0.95 of Socket 2x2 at 2 ranks).
cd "$(dirname "$0")/.."; A=/tmp/run381; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0,1; echo "c73: $(cat dist/c73/commit.txt)" >> $A/machine.txt
build_tests_in /tmp/nt-2.28.3 /usr 32; NT=/tmp/nt-2.28.3/build
C=(--configs socket-1x1,socket-2x2,tcpxr-host,tcpxr-host+t16,tcpxr-host+p32 --variant t16:TCPXR_TEST_SPREAD_THREADS=16 --variant p32:NCCL_TCPXR_SPREAD_PIECE_BYTES=32K)
timeout 400 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c73 --mpirun --ranks 2 --ops all_reduce,all_gather,reduce_scatter --min 512K --max 4M --iters 20 --warmup 5 --cycles 2 --repeat 3 --timeout 45 \
  "${C[@]}" --out $A/r2 > $A/r2.txt 2>&1
el "r2 rc=$? $(grep -c ' ok, ' $A/r2.txt) ok, $(grep -c FAILED $A/r2.txt) failed"
grep -o '[a-z_]* tcpxr-host[+a-z0-9]*: [^|]*spread cut [^|]*' $A/r2/summary.md | grep -o '^[a-z_]* tcpxr-host[+a-z0-9]*\|spread cut [0-9]* of [0-9]*[^;]*' | paste - - | head -30 | tee -a $A/steps.txt
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
