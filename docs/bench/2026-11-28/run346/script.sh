#!/bin/bash
# run346 (2x H200, 32 cores): issue 31 item 1 at 2 ranks one per GPU in the band, on main's head
# (dist/c53 = a998f6dd, the library code of 1bdb43ab), where the README's table rests on run 324
# (against Socket 1x1 and 2x2 only, reduce_scatter not run): the four ops 512 KiB-8 MiB against all
# four Socket tunings, 40 iterations, -N 3 (steady state), three passes in alternated order.
cd "$(dirname "$0")/.."; A=/tmp/run346; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0,1; echo "c53: $(cat dist/c53/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
timeout 500 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c53 --mpirun --ranks 2 --ops all_reduce,all_gather,reduce_scatter,sendrecv --min 512K --max 8M --iters 40 --warmup 10 --cycles 3 --timeout 40 --repeat 3 \
  --configs tcpxr-host,socket,socket-1x1,socket-2x2,socket-4x4 --out $A/band > $A/band.txt 2>&1
el "band rc=$? $(grep -c ' ok, ' $A/band.txt) ok, $(grep -c FAILED $A/band.txt) failed"
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
