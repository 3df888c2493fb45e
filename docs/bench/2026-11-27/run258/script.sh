#!/bin/bash
# run258 (one H200; prepared 2026-11-27 in the twenty-ninth session, not yet run): the GPU RMA
# tests of tests/rma.rs for dist/c20 (main 7807c754 + dist/rma-peer-receive-steps.patch: Peer::receive as
# two steps, which moves the GPU-window staging lines), by default, with one hardware queue and
# under MPS (where GPU windows are refused with a WARN: gpu_rma_is_refused_under_mps).
cd "$(dirname "$0")/.."; A=/tmp/run258; source dist/common.sh
L=dist/c20
{ date -u; uname -r; nvidia-smi -L; nproc; echo "c20: $(cat $L/commit.txt)"; uptime; } > $A/machine.txt 2>&1
trap "tar cJf $R/run258.tar.xz -C /tmp run258" EXIT
export TCPXR_REQUIRE_GPU=1 TCPXR_BENCH=$PWD/$L/tcpxr-bench NCCL_TCPXR_IFNAME=lo
rt(){ local name=$1; shift; ( "$@"; timeout 300 $L/deps/rma --include-ignored --test-threads=1 --nocapture ${TESTS:-} ) > $A/rma-$name.txt 2>&1; el "rma tests, $name: rc=$? $(grep -h '^test result' $A/rma-$name.txt)"; }
# As runs 162/170: every test with default connections; with one queue, the refusal's test; under
# MPS, the MPS refusal's test (GPU windows are refused in both, by the rule).
rt default true
TESTS=one_hardware_queue_means_no_rma_device_and_a_warn_saying_why rt one-queue export CUDA_DEVICE_MAX_CONNECTIONS=1
mps_on; TESTS=gpu_rma_is_refused_under_mps rt mps export TCPXR_EXPECT_MPS=1; mps_off
el done
