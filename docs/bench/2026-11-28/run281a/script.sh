#!/bin/bash
# run281 (a 4-GPU host, 64 cores; 2026-11-28, thirty-second session): item 1 at 4 ranks one per
# GPU by medians, on main 04fef03a (dist/c30): 8 B-2 MiB, 200 iterations, the four Socket tunings
# and tcpxr (host buffers), three passes in rotated order (--repeat 3). PART a: all_reduce and
# sendrecv; b: all_gather and reduce_scatter.
PART=${1:?a or b}
cd "$(dirname "$0")/.."; A=/tmp/run281$PART; source dist/common.sh
start_run; echo "c30: $(cat dist/c30/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
case $PART in a) OPS=all_reduce,sendrecv;; b) OPS=all_gather,reduce_scatter;; esac
timeout 520 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c30 --mpirun --ranks 4 --ops $OPS --min 8 --max 2M --iters 200 --warmup 20 --timeout 60 --repeat 3 \
  --configs tcpxr-host,socket,socket-1x1,socket-2x2,socket-4x4 --out $A/t4 > $A/t4.txt 2>&1
el "t4 rc=$? $(grep -c ' ok, ' $A/t4.txt) ok, $(grep -c FAILED $A/t4.txt) failed"
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
