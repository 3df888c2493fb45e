#!/bin/bash
# run170 (one H200), the committed RMA code (e3034b6, whose src equals 889352e's) on the GPU:
# tests/rma.rs's GPU tests with default connections, the one-queue refusal in its own process,
# then MPS on: the MPS refusal and the whole suite again (GPU tests refused, CPU tests pass).
cd "$(dirname "$0")/.."; A=/tmp/run170; source dist/common.sh
trap "tar cJf $R/run170.tar.xz -C /tmp run170" EXIT
{ date -u; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
T(){ local name=$1; shift; ( export TCPXR_REQUIRE_GPU=1 NCCL_TCPXR_IFNAME=lo "$@"; timeout 150 dist/deps/rma --include-ignored --test-threads=1 --nocapture ${TESTS:-} ) > $A/$name.txt 2>&1; el "$name rc=$? $(grep -h 'test result' $A/$name.txt)"; }
T rma-default
TESTS=one_hardware_queue_means_no_rma_device_and_a_warn_saying_why T rma-1queue CUDA_DEVICE_MAX_CONNECTIONS=1
mps_on
TESTS=gpu_rma_is_refused_under_mps T rma-mps TCPXR_EXPECT_MPS=1
mps_off
grep -h "^test .*gpu.* \.\.\. " $A/rma-default.txt > $A/gpu-tests.txt
el done
