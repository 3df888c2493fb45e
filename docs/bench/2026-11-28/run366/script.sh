#!/bin/bash
# run366 (4x H200, session 45): NCCL_TCPXR_SPREAD_PIECE_BYTES, the spread rule as built
# (engine/spread.rs): a message below the comm's chunk is cut into min(stripes, T / (2 M)) pieces,
# none below the piece size, where T is the I/O pool's threads and M the send comms of the process
# that sent in this or the last 1 ms window (run 365 cut by the instant's count of messages out and
# cost the 2-rank all_reduce of 8 MiB on 8 channels 7 %). dist/c66 = the commit in commit.txt, on
# by default (128 KiB pieces); off: NCCL_TCPXR_SPREAD_PIECE_BYTES=0 (main before it); s64: 64 KiB.
# all_reduce, all_gather, reduce_scatter 512 KiB-16 MiB, 20 iterations, -N 2, three passes
# alternated, against Socket 1x1 and 2x2; 4 ranks one per GPU, then 2 ranks on GPUs 0-1 (with sendrecv).
cd "$(dirname "$0")/.."; A=/tmp/run366; source dist/common.sh
start_run; echo "c66: $(cat dist/c66/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
V=(--variant off:NCCL_TCPXR_SPREAD_PIECE_BYTES=0 --variant s64:NCCL_TCPXR_SPREAD_PIECE_BYTES=65536)
C=socket-1x1,socket-2x2,tcpxr-host,tcpxr-host+off,tcpxr-host+s64
CUDA_VISIBLE_DEVICES=0,1,2,3 timeout 300 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c66 --mpirun --ranks 4 --ops all_reduce,all_gather,reduce_scatter --min 512K --max 16M --iters 20 --warmup 5 --cycles 2 --repeat 3 --timeout 45 \
  --configs $C "${V[@]}" --out $A/r4 > $A/r4.txt 2>&1
el "r4 rc=$? $(grep -c ' ok, ' $A/r4.txt) ok, $(grep -c FAILED $A/r4.txt) failed"
CUDA_VISIBLE_DEVICES=0,1 timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c66 --mpirun --ranks 2 --ops all_reduce,all_gather,reduce_scatter,sendrecv --min 512K --max 16M --iters 20 --warmup 5 --cycles 2 --repeat 3 --timeout 45 \
  --configs $C "${V[@]}" --out $A/r2 > $A/r2.txt 2>&1
el "r2 rc=$? $(grep -c ' ok, ' $A/r2.txt) ok, $(grep -c FAILED $A/r2.txt) failed"
rm -rf $A/r*/r*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
