#!/bin/bash
# run363 (GPU 0 of a 2-GPU host; session 44): main's 84a0b72e (dist/c63: run 362's c62 with the
# review's fixes: a receive comm that cannot wait for its unpack launches keeps its TCPX stripes
# (RecvLane's inner stripe behind ManuallyDrop), the peer watch's 5 s grace, test/send_peer_from):
#  1. the GPU test binaries of c63 (gpu, gpu_copy_in, gpu_demote, gpu_hazard, gpu_tcpx with the
#     new TCPX emulator), TCPXR_REQUIRE_GPU=1: default, CUDA_DEVICE_MAX_CONNECTIONS=1, under MPS;
#     rma by default only (RMA offers no device under one hardware queue or MPS, run 360);
#  2. checks on c63: 3 and 4 ranks on GPU 0 under MPS, host and GPU buffers, NCCL's choice, Ring,
#     Tree; 4 ranks with CUDA_DEVICE_MAX_CONNECTIONS=1; all_reduce and sendrecv, -c 1.
cd "$(dirname "$0")/.."; A=/tmp/run363; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c63: $(cat dist/c63/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; ( [ -x $NT/sendrecv_perf ] || tests_228 ) & BUILD=$!
export TCPXR_REQUIRE_GPU=1 TCPX_EMU_LIB=$PWD/dist/c63/libtcpx_emu.so
gt(){ local mode=$1 tests=$2; shift 2
  for t in $tests; do
    env "$@" timeout 150 dist/c63/deps/$t --include-ignored --test-threads=1 > $A/$t-$mode.txt 2>&1
    el "$t $mode rc=$? $(grep -h '^test result' $A/$t-$mode.txt)"; grep -h 'FAILED\|panicked' $A/$t-$mode.txt | head -5 | tee -a $A/steps.txt
  done; }
G="gpu gpu_copy_in gpu_demote gpu_hazard gpu_tcpx"
gt default "rma $G" CUDA_VISIBLE_DEVICES=0
gt 1queue "$G" CUDA_VISIBLE_DEVICES=0 CUDA_DEVICE_MAX_CONNECTIONS=1
mps_on; gt mps "$G" CUDA_VISIBLE_DEVICES=0; mps_off
unset TCPXR_REQUIRE_GPU TCPX_EMU_LIB
wait $BUILD; NT=/tmp/nt-2.28.3/build; el "nccl-tests ready: $(ls $NT | wc -l) files"
checks dist/c63
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
