#!/bin/bash
# run338 (2x H200, 32 cores; 2 ranks one per GPU): run 335 again where it was inconclusive, on the
# sizes the candidate row touches: NCCL's own count of the 8 built channels for host buffers at
# 4-32 MiB shares (dist/c51 = main + run335/built-channels.patch) against main's cap at 4
# (dist/c49), all_reduce 8-64 MiB (shares 4-32 MiB: 64 MiB is the control, the same code in both)
# and all_gather, reduce_scatter 8-64 MiB (shares 4-32 MiB), with Socket 1x1 and 2x2 for item 2's
# ratio; 20 iterations, -N 3 (steady state), three passes in alternated order.
cd "$(dirname "$0")/.."; A=/tmp/run338; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0,1; echo "c49: $(cat dist/c49/commit.txt); c51: $(cat dist/c51/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
timeout 420 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c49 --mpirun --ranks 2 --ops all_reduce,all_gather,reduce_scatter --min 8M --max 64M --iters 20 --warmup 3 --cycles 3 --timeout 60 --repeat 3 \
  --configs tcpxr-host,tcpxr-host+b8,socket-1x1,socket-2x2 --variant b8:NCCL_NET_PLUGIN=$PWD/dist/c51/libnccl-net-tcpxr.so --out $A/b8 > $A/b8.txt 2>&1
el "b8 rc=$? $(grep -c ' ok, ' $A/b8.txt) ok, $(grep -c FAILED $A/b8.txt) failed"
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
