#!/bin/bash
# run400 (one H200, session 49): which CUDA calls made while a kernel holds the GPU keep a copy
# issued after them (another stream, non-blocking) from running until the kernel ends
# (tests/gpu_pinned_barrier.rs as dist/c82/deps/gpu_pinned_barrier, built on 8a386356 + that file).
# By default, with CUDA_DEVICE_MAX_CONNECTIONS=1, and under MPS.
cd "$(dirname "$0")/.."; A=/tmp/run400; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0
t(){ local mode=$1; shift; env TCPXR_REQUIRE_GPU=1 "$@" timeout 300 dist/c82/deps/gpu_pinned_barrier --include-ignored --nocapture > $A/$mode.txt 2>&1
  el "$mode rc=$?"; grep -h 'RESULT\|panicked' $A/$mode.txt | tee -a $A/steps.txt; }
t default
t 1queue CUDA_DEVICE_MAX_CONNECTIONS=1
mps_on; t mps; mps_off
el done
