#!/bin/bash
# run201 (a 4-GPU host; 2026-11-27, twenty-second session): issue 31 item 1 at 4 ranks one per GPU
# on 1af520f (dist/new): the four collectives 8 B-512 MiB against all four Socket tunings in one
# run (run_nccl_tests.py --mpirun --ranks 4, 20 iterations, -c 1), as run 160 on 3e12ccb. One run:
# the device time left allowed no alternation.
cd "$(dirname "$0")/.."; A=/tmp/run201; source dist/common.sh
start_run; cat dist/new/commit.txt >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 48
timeout 370 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/new --mpirun --ranks 4 --ops all_reduce,all_gather,reduce_scatter,sendrecv --max 512M --iters 20 --warmup 5 --timeout 100 --configs socket,socket-1x1,socket-2x2,socket-4x4,tcpxr-host --out $A/table4 > $A/table4.txt 2>&1
el "table4 rc=$? $(grep -c ' ok, ' $A/table4.txt) ok, $(grep -c FAILED $A/table4.txt) failed"
python3 dist/medtab.py $A/table4 > $A/ratios.txt 2>&1
el done
