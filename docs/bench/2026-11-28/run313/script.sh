#!/bin/bash
# run313 (a 4-GPU host, 4 ranks one per GPU): at 4 ranks all_reduce of 512 KiB-2 MiB took
# 0.79-0.95 of Socket 1x1's and 2x2's time (run 311), all_gather 0.64-0.95 (run 281a); tcpxr's tuner
# runs them in the ring's Simple on 1-2 channels (rows measured at 2 ranks). Is 4 channels better
# at 4 ranks? main (dist/c44, the row's library) at its default and bounded to 4 channels
# (NCCL_MIN_NCHANNELS=NCCL_MAX_NCHANNELS=4: the tuner still names the ring's Simple, NCCL keeps 4),
# Socket 1x1 and 2x2; all_reduce and all_gather 256 KiB-4 MiB, 100 iterations, --cycles 3,
# --repeat 2, host buffers; NCCL's channel counts from r1's logs.
cd "$(dirname "$0")/.."; A=/tmp/run313; source dist/common.sh
start_run; echo "c44: $(cat dist/c44/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
timeout 330 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c44 --mpirun --ranks 4 --ops all_reduce,all_gather --min 256K --max 4M --iters 100 --warmup 10 --timeout 60 --repeat 2 --cycles 3 \
  --configs tcpxr-host,tcpxr-host+c4,socket-1x1,socket-2x2 --variant c4:NCCL_MIN_NCHANNELS=4 --variant c4:NCCL_MAX_NCHANNELS=4 --out $A/m > $A/m.txt 2>&1
el "m rc=$? $(grep -c ' ok, ' $A/m.txt) ok, $(grep -c FAILED $A/m.txt) failed"
for f in $A/m/r1/logs/*.nccl.*; do echo "$(basename $f): $(grep -o 'Channel [0-9]*/[0-9]*' $f | sed 's/.*\///' | sort -u | tr '\n' ' ')"; done 2>/dev/null | sort | uniq -c | head -40 > $A/channels.txt
rm -rf $A/m/r*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/m/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
