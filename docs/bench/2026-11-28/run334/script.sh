#!/bin/bash
# run334 (a 4-GPU host, 4 ranks one per GPU; prepared in sessions 39-40, not run): main's head
# (dist/c53 = a998f6dd, with the tree-LL row) against main before the row (dist/c49 = ba328017)
# where run 323 found 2 KiB 64.2 us on 10 Gb/s against 52.3 in the tree: all_reduce 8 B-16 KiB,
# 200 iterations, -N 3, three passes, with Socket default and 1x1, and c53 with the ring and with
# the tree forced; then item 1 at 4 ranks at 8 B-512 KiB against Socket default and 1x1
# (all_gather, reduce_scatter, sendrecv, 200 iterations, -N 3, two passes).
cd "$(dirname "$0")/.."; A=/tmp/run334; source dist/common.sh
start_run; echo "c49: $(cat dist/c49/commit.txt); c53: $(cat dist/c53/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
OLD=old:NCCL_NET_PLUGIN=$PWD/dist/c49/libnccl-net-tcpxr.so
timeout 240 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c53 --mpirun --ranks 4 --ops all_reduce --min 8 --max 16K --iters 200 --warmup 20 --cycles 3 --timeout 40 --repeat 3 \
  --configs tcpxr-host,tcpxr-host+old,tcpxr-host+ring,tcpxr-host+tree,socket,socket-1x1 --variant $OLD --variant ring:NCCL_ALGO=Ring --variant tree:NCCL_ALGO=Tree --out $A/s4 > $A/s4.txt 2>&1
el "s4 rc=$? $(grep -c ' ok, ' $A/s4.txt) ok, $(grep -c FAILED $A/s4.txt) failed"
timeout 250 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c53 --mpirun --ranks 4 --ops all_gather,reduce_scatter,sendrecv --min 8 --max 512K --iters 200 --warmup 20 --cycles 3 --timeout 40 --repeat 2 \
  --configs tcpxr-host,socket,socket-1x1 --out $A/small > $A/small.txt 2>&1
el "small rc=$? $(grep -c ' ok, ' $A/small.txt) ok, $(grep -c FAILED $A/small.txt) failed"
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
