#!/bin/bash
# run349 (2x H200: 2 ranks one per GPU): dist/c55 (irecv's pass only while the sender is ahead)
# against main (dist/c53) and Socket default and 1x1 where the pass at every irecv cost (run 343):
# all_gather, reduce_scatter and all_reduce 8 B-1 KiB, 200 iterations, -N 3, three passes
# alternated.
cd "$(dirname "$0")/.."; A=/tmp/run349; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0,1; echo "c53: $(cat dist/c53/commit.txt); c55: $(cat dist/c55/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
timeout 400 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c53 --mpirun --ranks 2 --ops all_gather,reduce_scatter,all_reduce --min 8 --max 1K --iters 200 --warmup 20 --cycles 3 --timeout 30 --repeat 3 \
  --configs tcpxr-host,tcpxr-host+ahead,socket,socket-1x1 --variant ahead:NCCL_NET_PLUGIN=$PWD/dist/c55/libnccl-net-tcpxr.so --out $A/p2 > $A/p2.txt 2>&1
el "p2 rc=$? $(grep -c ' ok, ' $A/p2.txt) ok, $(grep -c FAILED $A/p2.txt) failed"
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
