#!/bin/bash
# run359 (GPU 0 of a 2-GPU host; session 44): main's 8672cf41 (dist/c59: the unpack stage keeps
# chunks while every launch is busy, closing GPU work bounded; and session 43's connection-setup
# and socket-close changes, 26e4b257, none yet run on a GPU):
#  1. the GPU test binaries of c59 (gpu, gpu_copy_in, gpu_demote, gpu_hazard, gpu_tcpx with the
#     TCPX emulator), TCPXR_REQUIRE_GPU=1: default, CUDA_DEVICE_MAX_CONNECTIONS=1, under MPS;
#  2. checks on c59: 3 and 4 ranks on GPU 0 under MPS, host and GPU buffers, NCCL's choice, Ring,
#     Tree; 4 ranks with CUDA_DEVICE_MAX_CONNECTIONS=1; all_reduce and sendrecv, -c 1.
cd "$(dirname "$0")/.."; A=/tmp/run359; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c59: $(cat dist/c59/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; ( [ -x $NT/sendrecv_perf ] || tests_228 ) & BUILD=$!
export TCPXR_REQUIRE_GPU=1 TCPX_EMU_LIB=$PWD/dist/c59/libtcpx_emu.so
gt(){ local mode=$1; shift
  for t in gpu gpu_copy_in gpu_demote gpu_hazard gpu_tcpx; do
    env "$@" timeout 120 dist/c59/deps/$t --include-ignored --test-threads=1 > $A/$t-$mode.txt 2>&1
    el "$t $mode rc=$? $(grep -h '^test result' $A/$t-$mode.txt)"; grep -h 'FAILED\|panicked' $A/$t-$mode.txt | head -5 | tee -a $A/steps.txt
  done; }
gt default CUDA_VISIBLE_DEVICES=0
gt 1queue CUDA_VISIBLE_DEVICES=0 CUDA_DEVICE_MAX_CONNECTIONS=1
mps_on; gt mps CUDA_VISIBLE_DEVICES=0; mps_off
unset TCPXR_REQUIRE_GPU TCPX_EMU_LIB
wait $BUILD; NT=/tmp/nt-2.28.3/build; el "nccl-tests ready: $(ls $NT | wc -l) files"
checks dist/c59
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
