#!/bin/bash
# run256 (the 4-GPU instance of run 255, right after it; 2026-11-27): Socket's two bulk tunings
# (2x2, 4x4 won bulk at 4 ranks in runs 213 and 254) and tcpxr (c17) on that instance, all_gather
# and all_reduce 16-512 MiB, 4 ranks one per GPU, 20 iterations, -c 1: the ratio on an instance
# where tcpxr ran as in run 213, beside run 254's slow one.
cd "$(dirname "$0")/.."; A=/tmp/run256; source dist/common.sh
start_run; echo "c17: $(cat dist/c17/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build
timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c17 --mpirun --ranks 4 --ops all_gather,all_reduce --min 16M --max 512M --iters 20 --warmup 5 --timeout 60 --configs socket-2x2,socket-1x1,tcpxr-host --out $A/b > $A/b.txt 2>&1
el "b rc=$? $(grep -c ' ok, ' $A/b.txt) ok"
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
