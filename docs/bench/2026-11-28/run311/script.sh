#!/bin/bash
# run311 (a 4-GPU host): the ring's LL for all_reduce shares of 2-16 KiB on 3-4 ranks (dist/c44 =
# b11a461d + the row of run 309's dist/c42, and a v2 pick that names LL only where tcpxr did not
# set NCCL_PROTO=Simple).
# 1. The 3-4-rank correctness set with c44 (checks: GPU 0 under MPS, host and GPU buffers,
#    all_reduce and sendrecv, NCCL's choice, Ring, Tree, 8 B-32 MiB -c 1; 4 ranks with one queue).
# 2. 4 ranks one per GPU, all_reduce 8 B-2 MiB against Socket's four tunings, 200 iterations,
#    --cycles 5 (steady state), --repeat 3, host buffers.
cd "$(dirname "$0")/.."; A=/tmp/run311; source dist/common.sh
start_run; echo "c44: $(cat dist/c44/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
checks dist/c44
timeout 300 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c44 --mpirun --ranks 4 --ops all_reduce --min 8 --max 2M --iters 200 --warmup 20 --timeout 60 --repeat 3 --cycles 5 \
  --configs tcpxr-host,socket,socket-1x1,socket-2x2,socket-4x4 --out $A/a > $A/a.txt 2>&1
el "a rc=$? $(grep -c ' ok, ' $A/a.txt) ok, $(grep -c FAILED $A/a.txt) failed"
grep -h "tuner" $A/a/r1/logs/all_reduce.tcpxr-host.nccl.* 2>/dev/null | sed 's/^.*NCCL INFO //' | sort | uniq -c | cut -c1-300 > $A/tuner.txt
rm -rf $A/a/r*/logs $A/check-*/r*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
