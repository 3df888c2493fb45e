#!/bin/bash
# run97 on one GPU (nvidia-h200, 16 cores): run 96's test binaries again (dist/mk.sh had copied
# tcpxr-bench under their names): gpu_hazard, gpu, gpu_tcpx with CUDA_DEVICE_MAX_CONNECTIONS=1 and
# under MPS, and 256 idle connections' threads, on 53adf32.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run97.sh)
R=${OUT:-/tmp/out}; A=/tmp/run97; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
fin(){ tar czf $R/run97.tgz -C /tmp run97; cat $A/steps.txt; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt; } > $A/machine.txt 2>&1
gt(){ for t in gpu_hazard gpu gpu_tcpx; do echo "== $t"; timeout 100 dist/deps/$t --test-threads=1 --nocapture; echo "== $t rc=$?"; done; }
( export TCPXR_REQUIRE_GPU=1 TCPX_EMU_LIB=$PWD/dist/libtcpx_emu.so TCPXR_BENCH=$PWD/dist/tcpxr-bench CUDA_DEVICE_MAX_CONNECTIONS=1; gt ) > $A/gpu-tests-1queue.txt 2>&1
grep -E "^== |test result" $A/gpu-tests-1queue.txt | sed 's/^/1queue /' | tee -a $A/steps.txt
P=$(mktemp -d /tmp/mpsXXXX)
( export TCPXR_REQUIRE_GPU=1 TCPX_EMU_LIB=$PWD/dist/libtcpx_emu.so TCPXR_BENCH=$PWD/dist/tcpxr-bench CUDA_MPS_PIPE_DIRECTORY=$P CUDA_MPS_LOG_DIRECTORY=$P
  nvidia-cuda-mps-control -d; sleep 1; gt; echo quit | nvidia-cuda-mps-control; sleep 2 ) > $A/gpu-tests-mps.txt 2>&1
grep -E "^== |test result" $A/gpu-tests-mps.txt | sed 's/^/mps /' | tee -a $A/steps.txt
timeout 60 dist/deps/idle --nocapture > $A/idle-256.txt 2>&1; el "idle rc=$? $(grep connections $A/idle-256.txt)"
