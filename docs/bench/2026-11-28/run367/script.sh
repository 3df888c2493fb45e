#!/bin/bash
# run367 (GPU 0 of the 4-GPU host, right after run 366; session 45): main's 11faf3e7 (dist/c66:
# the spread rule, rma's tracked host functions and pieces, tcpx's SIGPIPE guard and connect sweep):
#  1. the GPU test binaries of c66 (gpu, gpu_copy_in, gpu_demote, gpu_hazard, gpu_tcpx with the
#     TCPX emulator), TCPXR_REQUIRE_GPU=1: default, CUDA_DEVICE_MAX_CONNECTIONS=1, under MPS;
#     rma by default only (RMA offers no device under one hardware queue or MPS, run 360);
#  2. checks on c66: 3 and 4 ranks on GPU 0 under MPS, host and GPU buffers, NCCL's choice, Ring,
#     Tree; 4 ranks with CUDA_DEVICE_MAX_CONNECTIONS=1; all_reduce and sendrecv, -c 1.
cd "$(dirname "$0")/.."; A=/tmp/run367; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c66: $(cat dist/c66/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; ( [ -x $NT/sendrecv_perf ] || tests_228 ) & BUILD=$!
export TCPXR_REQUIRE_GPU=1 TCPX_EMU_LIB=$PWD/dist/c66/libtcpx_emu.so
gt(){ local mode=$1 tests=$2; shift 2
  for t in $tests; do
    env "$@" timeout 150 dist/c66/deps/$t --include-ignored --test-threads=1 > $A/$t-$mode.txt 2>&1
    el "$t $mode rc=$? $(grep -h '^test result' $A/$t-$mode.txt)"; grep -h 'FAILED\|panicked' $A/$t-$mode.txt | head -5 | tee -a $A/steps.txt
  done; }
G="gpu gpu_copy_in gpu_demote gpu_hazard gpu_tcpx"
gt default "rma $G" CUDA_VISIBLE_DEVICES=0
gt 1queue "$G" CUDA_VISIBLE_DEVICES=0 CUDA_DEVICE_MAX_CONNECTIONS=1
mps_on; gt mps "$G" CUDA_VISIBLE_DEVICES=0; mps_off
unset TCPXR_REQUIRE_GPU TCPX_EMU_LIB
wait $BUILD; NT=/tmp/nt-2.28.3/build; el "nccl-tests ready: $(ls $NT | wc -l) files"
checks dist/c66
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
