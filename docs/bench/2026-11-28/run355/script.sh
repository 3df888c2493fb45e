#!/bin/bash
# run355 (2x H200, 2 ranks one per GPU; session 42): run 354 found the all_reduce of 2 MiB at 2 ranks
# 333-336 us in 128 KiB chunks against 359-378 in the default 512 KiB (NCCL's ring sends it as
# 256 KiB messages, each one chunk moved by one I/O thread a side; Socket 2x2 took 314-347), but
# 128 KiB chunks cost the bulk before (run 217: all_gather and reduce_scatter of 16 MiB 1.29-1.42x
# the time), where NCCL's messages are whole 512 KiB chunks. dist/c56 = main + exp-mid-chunk.patch:
# a message below the comm's chunk is cut into pieces of at least NCCL_TCPXR_EXP_MID_CHUNK (128 KiB
# by default) while streaming too; whole chunks stay whole. The four ops 512 KiB-16 MiB, 40
# iterations, -N 3, three passes alternated: c56, c56 with the cut off (main's behaviour), c56
# with 64 KiB, against Socket 1x1 and 2x2.
cd "$(dirname "$0")/.."; A=/tmp/run355; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0,1; echo "c56: $(cat dist/c56/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
timeout 520 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c56 --mpirun --ranks 2 --ops all_reduce,all_gather,reduce_scatter,sendrecv --min 512K --max 16M --iters 40 --warmup 10 --cycles 3 --timeout 40 --repeat 3 \
  --configs tcpxr-host,tcpxr-host+off,tcpxr-host+m64,socket-1x1,socket-2x2 \
  --variant off:NCCL_TCPXR_EXP_MID_CHUNK=0 --variant m64:NCCL_TCPXR_EXP_MID_CHUNK=65536 --out $A/mid > $A/mid.txt 2>&1
el "mid rc=$? $(grep -c ' ok, ' $A/mid.txt) ok, $(grep -c FAILED $A/mid.txt) failed"
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
