#!/bin/bash
# run373 (4x H200, session 46): the spread rule as committed (dist/c71: run 370's count of moving
# comms, 64 KiB pieces by default, which run 372 found best; point-to-point connections keep the
# idle rule) on by default against NCCL_TCPXR_SPREAD_PIECE_BYTES=0 (+off: main's behaviour) and
# Socket 2x2 (the instance's control). 20 iterations, -N 2, -c 1.
#  r4: 4 ranks one per GPU, all_reduce, all_gather, reduce_scatter, sendrecv 1-16 MiB, four passes;
#  r2: 2 ranks on GPUs 0-1, all_reduce and sendrecv 1-16 MiB, three passes;
#  then the correctness set on c71 (checks: 3-4 ranks on GPU 0 under MPS, NCCL/Ring/Tree, host
#  and GPU buffers; 4 ranks CUDA_DEVICE_MAX_CONNECTIONS=1).
cd "$(dirname "$0")/.."; A=/tmp/run373; source dist/common.sh
start_run; echo "c71: $(cat dist/c71/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
C=(--configs socket-2x2,tcpxr-host,tcpxr-host+off --variant off:NCCL_TCPXR_SPREAD_PIECE_BYTES=0)
CUDA_VISIBLE_DEVICES=0,1,2,3 timeout 300 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c71 --mpirun --ranks 4 --ops all_reduce,all_gather,reduce_scatter,sendrecv --min 1M --max 16M --iters 20 --warmup 5 --cycles 2 --repeat 4 --timeout 45 \
  "${C[@]}" --out $A/r4 > $A/r4.txt 2>&1
el "r4 rc=$? $(grep -c ' ok, ' $A/r4.txt) ok, $(grep -c FAILED $A/r4.txt) failed"
CUDA_VISIBLE_DEVICES=0,1 timeout 80 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c71 --mpirun --ranks 2 --ops all_reduce,sendrecv --min 1M --max 16M --iters 20 --warmup 5 --cycles 2 --repeat 3 --timeout 45 \
  "${C[@]}" --out $A/r2 > $A/r2.txt 2>&1
el "r2 rc=$? $(grep -c ' ok, ' $A/r2.txt) ok, $(grep -c FAILED $A/r2.txt) failed"
checks dist/c71
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
