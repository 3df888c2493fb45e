#!/bin/bash
# run372 (4x H200, session 46): run 370's spread rule again, with more passes, now that run 371
# showed where it cuts (NCCL_TCPXR_STATS): at 4 ranks only all_reduce of 4 MiB (256 KiB messages
# on 2 channels, 2 comms moving: 2 pieces of 128 KiB); at 2 ranks all_reduce of 2 MiB; nearly
# nothing elsewhere (all_gather and reduce_scatter 4-16 MiB: at most 8 of 4704 messages). So run
# 370's on/off differences at sizes it left alone (up to 13 %) are that run's noise between
# identical code paths. dist/c70 = 3c7bcfeb + dist/exp-recent-stats.patch (rule on, 128 KiB pieces)
# against +p64 (NCCL_TCPXR_SPREAD_PIECE_BYTES=64K: 128 KiB messages cut too), +off (0: main) and
# Socket 2x2 (the instance's control). 20 iterations, -N 2, -c 1.
#  r4: 4 ranks one per GPU, all_reduce, all_gather, reduce_scatter 1-16 MiB, five passes alternated;
#  r2: 2 ranks on GPUs 0-1, all_reduce and all_gather 1-16 MiB, three passes;
#  then the correctness set on c70 (checks: 3-4 ranks on GPU 0 under MPS, NCCL/Ring/Tree, host
#  and GPU buffers; 4 ranks CUDA_DEVICE_MAX_CONNECTIONS=1).
cd "$(dirname "$0")/.."; A=/tmp/run372; source dist/common.sh
start_run; echo "c70: $(cat dist/c70/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
C=(--configs socket-2x2,tcpxr-host,tcpxr-host+p64,tcpxr-host+off --variant p64:NCCL_TCPXR_SPREAD_PIECE_BYTES=64K --variant off:NCCL_TCPXR_SPREAD_PIECE_BYTES=0)
CUDA_VISIBLE_DEVICES=0,1,2,3 timeout 330 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c70 --mpirun --ranks 4 --ops all_reduce,all_gather,reduce_scatter --min 1M --max 16M --iters 20 --warmup 5 --cycles 2 --repeat 5 --timeout 45 \
  "${C[@]}" --out $A/r4 > $A/r4.txt 2>&1
el "r4 rc=$? $(grep -c ' ok, ' $A/r4.txt) ok, $(grep -c FAILED $A/r4.txt) failed"
CUDA_VISIBLE_DEVICES=0,1 timeout 100 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c70 --mpirun --ranks 2 --ops all_reduce,all_gather --min 1M --max 16M --iters 20 --warmup 5 --cycles 2 --repeat 3 --timeout 45 \
  "${C[@]}" --out $A/r2 > $A/r2.txt 2>&1
el "r2 rc=$? $(grep -c ' ok, ' $A/r2.txt) ok, $(grep -c FAILED $A/r2.txt) failed"
checks dist/c70
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
