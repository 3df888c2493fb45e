#!/bin/bash
# run421 (one H200, session 52): the correctness set on dist/c92 (the gathered header read, run
# 420) with all four ops: 3 and 4 ranks on GPU 0 under MPS, host and GPU buffers, NCCL's choice,
# Ring and Tree; 4 ranks with GPU buffers and CUDA_DEVICE_MAX_CONNECTIONS=1; 8 B-32 MiB -c 1.
cd "$(dirname "$0")/.."; A=/tmp/run421; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 16
checks dist/c92 all_reduce,all_gather,reduce_scatter,sendrecv
rm -rf $A/check-*/logs $A/check-*/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/check-*/*.txt $A/check-*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
