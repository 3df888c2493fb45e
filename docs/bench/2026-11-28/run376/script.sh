#!/bin/bash
# run376 (one H200, 16 cores, session 46): where the spread rule cuts in the one-GPU shapes (ranks
# sharing GPU 0 under MPS, each its own NCCL host): main's library (dist/c72, the rule on by
# default), host buffers, all_reduce and all_gather 1-16 MiB, 20 iterations, -c 1, one pass at 2
# and at 4 ranks; the runner's summary sums each run's "spread cut X of Y" (NCCL_TCPXR_STATS).
# There each process's I/O pool has 6 (2 ranks) or 2 (4 ranks) threads, so on 2 channels the rule
# should cut nothing (6 / (2 x 2) and 2 / (2 x 2) are one piece).
cd "$(dirname "$0")/.."; A=/tmp/run376; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c72: $(cat dist/c72/commit.txt)" >> $A/machine.txt
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
for np in 2 4; do
  timeout 120 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c72 --one-gpu --mps --ranks $np --ops all_reduce,all_gather --configs tcpxr-host \
    --min 1M --max 16M --iters 20 --warmup 5 --timeout 50 --out $A/r$np > $A/r$np.txt 2>&1
  el "r$np rc=$? $(grep -c ' ok, ' $A/r$np.txt) ok, $(grep -c FAILED $A/r$np.txt) failed; $(grep -o 'all_[a-z]* tcpxr-host: send: [^;|]*' $A/r$np/summary.md | sed 's/stripes.*spread/spread/' | tr '\n' ' ')"
done
rm -rf $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
