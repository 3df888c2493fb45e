#!/bin/bash
# run390 (one H200, session 48): the checks the last session could not run on main's head
# (dist/c78 = main 64c3d1e1: a striped message scans the ring of moving comms only where the
# spread rule decides it).
#  1. The GPU test binaries (gpu_tests): rma and spread by default; gpu, gpu_copy_in, gpu_demote,
#     gpu_hazard, gpu_tcpx by default, with CUDA_DEVICE_MAX_CONNECTIONS=1 and under MPS.
#  2. The correctness set (checks): 3 and 4 ranks on GPU 0 under MPS, host and GPU buffers,
#     all_reduce and sendrecv 8 B-32 MiB, NCCL's choice, Ring, Tree; 4 ranks with
#     CUDA_DEVICE_MAX_CONNECTIONS=1.
cd "$(dirname "$0")/.."; A=/tmp/run390; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c78: $(cat dist/c78/commit.txt)" >> $A/machine.txt
build_tests_in /tmp/nt-2.28.3 /usr 16 & BUILD=$!
gpu_tests dist/c78
wait $BUILD; NT=/tmp/nt-2.28.3/build
checks dist/c78
rm -rf $A/*/r*/logs $A/*/logs $A/check-*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/check-*/*.txt $A/check-*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
