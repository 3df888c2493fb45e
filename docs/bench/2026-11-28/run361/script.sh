#!/bin/bash
# run361 (2x H200, 2 ranks one per GPU; session 44): the mid band by message size. Run 358 found a
# collective's connection carries about one message at a time at every size, so only a message's
# size tells the 2 MiB all_reduce (256 KiB messages on 2 channels) from the bulk (512 KiB-1 MiB).
# dist/c61 = main's 9a8beb72 + dist/exp-mid-max.patch: a message of at most
# NCCL_TCPXR_EXP_MID_MAX bytes is cut into NCCL_TCPXR_EXP_MID_PIECE pieces whatever else is out.
# all_reduce, all_gather, reduce_scatter 512 KiB-16 MiB, 20 iterations, -N 2 (steady state), three
# passes alternated: Socket 1x1 and 2x2 (the best tunings there in runs 346-357), tcpxr's default, and
# messages up to 256 KiB cut into 128 KiB (m128) or 64 KiB (m64) pieces.
cd "$(dirname "$0")/.."; A=/tmp/run361; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0,1; echo "c61: $(cat dist/c61/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
timeout 480 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c61 --mpirun --ranks 2 --ops all_reduce,all_gather,reduce_scatter --min 512K --max 16M --iters 20 --warmup 5 --cycles 2 --repeat 3 --timeout 45 \
  --configs socket-1x1,socket-2x2,tcpxr-host,tcpxr-host+m128,tcpxr-host+m64 --variant m128:NCCL_TCPXR_EXP_MID_MAX=262144 --variant m64:NCCL_TCPXR_EXP_MID_MAX=262144 --variant m64:NCCL_TCPXR_EXP_MID_PIECE=65536 --out $A/mid > $A/mid.txt 2>&1
el "mid rc=$? $(grep -c ' ok, ' $A/mid.txt) ok, $(grep -c FAILED $A/mid.txt) failed"
rm -rf $A/mid/r*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
