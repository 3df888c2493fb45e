#!/bin/bash
# run315 (a 4-GPU host, 4 ranks one per GPU): item 1's other three ops at 4 ranks were last
# measured before the steady-state runner (runs 281a, 283). all_gather, reduce_scatter and sendrecv
# 8 B-2 MiB against Socket's four tunings, main (dist/c44, the row's library; the row touches
# only all_reduce), 100 iterations, --cycles 3, one pass (the device time left), host buffers.
cd "$(dirname "$0")/.."; A=/tmp/run315; source dist/common.sh
start_run; echo "c44: $(cat dist/c44/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
timeout 150 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c44 --mpirun --ranks 4 --ops all_gather,reduce_scatter,sendrecv --min 8 --max 2M --iters 100 --warmup 10 --timeout 40 --cycles 3 \
  --configs tcpxr-host,socket,socket-1x1,socket-2x2,socket-4x4 --out $A/o > $A/o.txt 2>&1
el "o rc=$? $(grep -c ' ok, ' $A/o.txt) ok, $(grep -c FAILED $A/o.txt) failed"
rm -rf $A/o/logs $A/o/r*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/o/*.txt $A/o/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
