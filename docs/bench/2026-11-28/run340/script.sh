#!/bin/bash
# run340 (one GPU of any lent machine; 4 ranks on GPU 0 under MPS, 16+ cores): issue 31 item 1 in
# that shape at steady state on main with the tree's LL row (dist/c52 = 8416ff46, the code of
# c36cd4b2 and later): runs 327-328 ran 10 iterations, and at 200 in run 333 the 8-64 B
# all_reduce was 0.92-0.98 of Socket default, not 0.77-0.85. The four ops 8 B-512 KiB, 200
# iterations, -N 3, two passes in alternated order, against Socket default, 1x1 and 2x2.
cd "$(dirname "$0")/.."; A=/tmp/run340; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c52: $(cat dist/c52/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
timeout 450 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c52 --one-gpu --mps --ranks 4 --ops all_reduce,all_gather,reduce_scatter,sendrecv --min 8 --max 512K --iters 200 --warmup 20 --cycles 3 --timeout 40 --repeat 2 \
  --configs tcpxr-host,socket,socket-1x1,socket-2x2 --out $A/small > $A/small.txt 2>&1
el "small rc=$? $(grep -c ' ok, ' $A/small.txt) ok, $(grep -c FAILED $A/small.txt) failed"
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
