#!/bin/bash
# run365 (4x H200, session 45): the mid band by how many messages the process has out. Runs 355-361
# found neither a comm's outstanding count nor a message's size tells the 2 MiB all_reduce (256 KiB
# messages on 2 channels) from the 4 MiB collectives (256 KiB on 4 channels): the process's count
# might. dist/c65 = acdb40e3 + dist/exp-busy.patch: a message below the comm's chunk, posted while
# `out` striped host messages of the process are out (itself included), is cut into
# min(stripes, NCCL_TCPXR_EXP_BUSY_THREADS / (2 out)) pieces, none below NCCL_TCPXR_EXP_BUSY_MIN.
# b64: 10 threads (the auto pool here), pieces >= 64 KiB; b128: >= 128 KiB. Off by default.
# all_reduce, all_gather, reduce_scatter 512 KiB-16 MiB, 20 iterations, -N 2, three passes alternated,
# against Socket 1x1 and 2x2; 4 ranks one per GPU, then 2 ranks on GPUs 0-1 (with sendrecv).
cd "$(dirname "$0")/.."; A=/tmp/run365; source dist/common.sh
start_run; echo "c65: $(cat dist/c65/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
V=(--variant b64:NCCL_TCPXR_EXP_BUSY_THREADS=10 --variant b128:NCCL_TCPXR_EXP_BUSY_THREADS=10 --variant b128:NCCL_TCPXR_EXP_BUSY_MIN=131072)
C=socket-1x1,socket-2x2,tcpxr-host,tcpxr-host+b64,tcpxr-host+b128
CUDA_VISIBLE_DEVICES=0,1,2,3 timeout 300 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c65 --mpirun --ranks 4 --ops all_reduce,all_gather,reduce_scatter --min 512K --max 16M --iters 20 --warmup 5 --cycles 2 --repeat 3 --timeout 45 \
  --configs $C "${V[@]}" --out $A/r4 > $A/r4.txt 2>&1
el "r4 rc=$? $(grep -c ' ok, ' $A/r4.txt) ok, $(grep -c FAILED $A/r4.txt) failed"
CUDA_VISIBLE_DEVICES=0,1 timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c65 --mpirun --ranks 2 --ops all_reduce,all_gather,reduce_scatter,sendrecv --min 512K --max 16M --iters 20 --warmup 5 --cycles 2 --repeat 3 --timeout 45 \
  --configs $C "${V[@]}" --out $A/r2 > $A/r2.txt 2>&1
el "r2 rc=$? $(grep -c ' ok, ' $A/r2.txt) ok, $(grep -c FAILED $A/r2.txt) failed"
rm -rf $A/r*/r*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
