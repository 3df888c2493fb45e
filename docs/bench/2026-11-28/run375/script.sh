#!/bin/bash
# run375 (one H200, session 46): main's head (dist/c72, with the spread rule) through the GPU test
# binaries (gpu, gpu_copy_in, gpu_demote, gpu_hazard, gpu_tcpx with the TCPX emulator),
# TCPXR_REQUIRE_GPU=1: default, CUDA_DEVICE_MAX_CONNECTIONS=1, under MPS; rma by default only (RMA
# offers no device under one hardware queue or MPS, run 360); spread (CPU-only, here as a check of
# the built binary on this host's 16 cores).
cd "$(dirname "$0")/.."; A=/tmp/run375; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c72: $(cat dist/c72/commit.txt)" >> $A/machine.txt
export TCPXR_REQUIRE_GPU=1 TCPX_EMU_LIB=$PWD/dist/c72/libtcpx_emu.so
gt(){ local mode=$1 tests=$2; shift 2
  for t in $tests; do
    env "$@" timeout 150 dist/c72/deps/$t --include-ignored --test-threads=1 > $A/$t-$mode.txt 2>&1
    el "$t $mode rc=$? $(grep -h '^test result' $A/$t-$mode.txt)"; grep -h 'FAILED\|panicked' $A/$t-$mode.txt | head -5 | tee -a $A/steps.txt
  done; }
G="gpu gpu_copy_in gpu_demote gpu_hazard gpu_tcpx"
gt default "rma spread $G" CUDA_VISIBLE_DEVICES=0
gt 1queue "$G" CUDA_VISIBLE_DEVICES=0 CUDA_DEVICE_MAX_CONNECTIONS=1
mps_on; gt mps "$G" CUDA_VISIBLE_DEVICES=0; mps_off
el done
