#!/bin/bash
# run383 (one H200, session 47): each RMA group queues its GPU work on a stream of its own
# (dist/c76 = main d787d898 + the change, not yet committed; the GPU's persistent stream keeps the
# engine's staging copies and unpack launches; gpu::Queue names the stream each call queues on).
#  1. The GPU test binaries: rma (with the new gpu_a_groups_held_stream_holds_no_other_groups_puts
#     and the close test rewritten for per-group streams) and spread by default; gpu,
#     gpu_copy_in, gpu_demote, gpu_hazard, gpu_tcpx by default, CUDA_DEVICE_MAX_CONNECTIONS=1 and
#     under MPS (gpu_tests).
#  2. The correctness set (checks): 3 and 4 ranks on GPU 0 under MPS, host and GPU buffers,
#     all_reduce and sendrecv 8 B-32 MiB, NCCL's choice, Ring, Tree; 4 ranks with
#     CUDA_DEVICE_MAX_CONNECTIONS=1 (the copy-in path's copies now go through gpu::copy_htod_async).
cd "$(dirname "$0")/.."; A=/tmp/run383; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c76: $(cat dist/c76/commit.txt)" >> $A/machine.txt
build_tests_in /tmp/nt-2.28.3 /usr 16 & BUILD=$!
gpu_tests dist/c76
wait $BUILD; NT=/tmp/nt-2.28.3/build
checks dist/c76
rm -rf $A/*/r*/logs $A/*/logs $A/check-*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/check-*/*.txt $A/check-*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
