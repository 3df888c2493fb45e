#!/bin/bash
# run316 (a 4-GPU host, 4 ranks then 2, one per GPU): at 4 ranks all_gather and reduce_scatter of
# 64-128 KiB took 173-273 us against Socket 1x1's 168-180 while 256 KiB, which the tuner runs in the
# ring's Simple on 1 channel (shares from 64 KiB), took 163-204 (run 315); at 2 ranks 32 KiB
# trails (0.83-0.92, runs 206, 287). dist/c45 = main + dist/exp-gs-row16.patch: that row from a
# 16 KiB share. c44 (main's library) against c45 and Socket's four tunings, all_gather and
# reduce_scatter 8 KiB-1 MiB, 200 iterations, --cycles 3, --repeat 3, host buffers, -c 1.
cd "$(dirname "$0")/.."; A=/tmp/run316; source dist/common.sh
start_run; for c in c44 c45; do echo "$c: $(cat dist/$c/commit.txt)"; done >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
C45=NCCL_NET_PLUGIN=$PWD/dist/c45/libnccl-net-tcpxr.so
for np in 4 2; do
  CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((np-1))) timeout 280 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c44 --mpirun --ranks $np --ops all_gather,reduce_scatter --min 8K --max 1M --iters 200 --warmup 20 --timeout 60 --repeat 3 --cycles 3 \
    --configs tcpxr-host,tcpxr-host+row16,socket,socket-1x1,socket-2x2,socket-4x4 --variant row16:$C45 --out $A/r$np > $A/r$np.txt 2>&1
  el "r$np rc=$? $(grep -c ' ok, ' $A/r$np.txt) ok, $(grep -c FAILED $A/r$np.txt) failed"
  rm -rf $A/r$np/r*/logs
done
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
