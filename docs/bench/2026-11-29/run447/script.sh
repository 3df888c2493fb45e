#!/bin/bash
# run447 (one H200): item 4 on main 483bc747 (dist/c104): GPU buffers against host buffers from
# 8 MiB, sendrecv and all_reduce, 2 and 4 ranks on GPU 0 under MPS (last measured here by run 377,
# sendrecv at 2 ranks only, on main 05d248cb's predecessor). 8-128 MiB, 20 iterations, two cycles
# a process (-N 2: the tables keep the steady second), three passes alternated, -c 1.
cd "$(dirname "$0")/.."; A=/tmp/run447; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c104: $(cat dist/c104/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 16
for np in 2 4; do
  timeout 250 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c104 --one-gpu --mps --ranks $np \
    --ops all_reduce,sendrecv --configs tcpxr-host,tcpxr-gpu --min 8M --max 128M --iters 20 --warmup 3 --cycles 2 \
    --repeat 3 --timeout 60 --out $A/gpu$np > $A/gpu$np.txt 2>&1
  el "gpu$np rc=$? $(grep -c ' ok, ' $A/gpu$np.txt) ok, $(grep -c FAILED $A/gpu$np.txt) failed"
done
rm -rf $A/*/r*/logs $A/*/logs $A/*/mps-log $A/*/r*/mps-log
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
