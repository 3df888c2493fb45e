#!/bin/bash
# run356 (a 4-GPU host, 4 ranks one per GPU; session 42): issue 31 items 1-2 at 4 ranks one per GPU
# in bulk on main, against all four Socket tunings: since lo is reported at 10 Gb/s (runs 322-323)
# the collectives were measured at 32-256 MiB against Socket 1x1 and 2x2 only, and 8-16 MiB not at
# all. all_reduce, all_gather, reduce_scatter 8-256 MiB, 10 iterations, two passes alternated,
# main's library code (dist/c53 = a998f6dd).
cd "$(dirname "$0")/.."; A=/tmp/run356; source dist/common.sh
start_run; echo "c53: $(cat dist/c53/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
timeout 480 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c53 --mpirun --ranks 4 --ops all_reduce,all_gather,reduce_scatter --min 8M --max 256M --iters 10 --warmup 2 --timeout 60 --repeat 2 \
  --configs tcpxr-host,socket,socket-1x1,socket-2x2,socket-4x4 --out $A/bulk > $A/bulk.txt 2>&1
el "bulk rc=$? $(grep -c ' ok, ' $A/bulk.txt) ok, $(grep -c FAILED $A/bulk.txt) failed"
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
