#!/bin/bash
# run101 on one GPU (nvidia-h200, 16 cores): the session's last library (e839f10) checked: the
# GPU test binaries with CUDA_DEVICE_MAX_CONNECTIONS=1 and under MPS, 256 idle connections'
# threads, host buffers 8 B - 4 MiB through NCCL under MPS (correctness), GPU buffers through NCCL
# with one hardware queue and under MPS.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run101.sh)
R=${OUT:-/tmp/out}; A=/tmp/run101; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run101.tgz -C /tmp run101; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
B=$!
gt(){ for t in gpu_hazard gpu gpu_tcpx; do echo "== $t"; timeout 100 dist/deps/$t --test-threads=1 --nocapture; echo "== $t rc=$?"; done; }
( export TCPXR_REQUIRE_GPU=1 TCPX_EMU_LIB=$PWD/dist/libtcpx_emu.so TCPXR_BENCH=$PWD/dist/tcpxr-bench CUDA_DEVICE_MAX_CONNECTIONS=1; gt ) > $A/gpu-tests-1queue.txt 2>&1
grep -E "^== |test result" $A/gpu-tests-1queue.txt | sed 's/^/1queue /' | tee -a $A/steps.txt
P=$(mktemp -d /tmp/mpsXXXX)
( export TCPXR_REQUIRE_GPU=1 TCPX_EMU_LIB=$PWD/dist/libtcpx_emu.so TCPXR_BENCH=$PWD/dist/tcpxr-bench CUDA_MPS_PIPE_DIRECTORY=$P CUDA_MPS_LOG_DIRECTORY=$P
  nvidia-cuda-mps-control -d; sleep 1; gt; echo quit | nvidia-cuda-mps-control; sleep 2 ) > $A/gpu-tests-mps.txt 2>&1
grep -E "^== |test result" $A/gpu-tests-mps.txt | sed 's/^/mps /' | tee -a $A/steps.txt
timeout 60 dist/deps/idle --nocapture > $A/idle-256.txt 2>&1; el "idle rc=$? $(grep connections $A/idle-256.txt)"
wait $B; el "$(cat $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build
m(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --iters 50 --warmup 10 --min 64K --max 2M --timeout 60 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
b=$(( $(date +%s)-T0 ))
m host $((b + 20)) --configs tcpxr-host --min 8 --max 4M --iters 20 --warmup 5; b=$((b + 20))
timeout $(left $((b + 30))) python3 ncclTests/run_nccl_tests.py --one-gpu --nccl-tests $NT --plugin-dir dist --iters 5 --warmup 2 --max 8M --timeout 40 --out $A/onequeue --configs tcpxr-gpu --env CUDA_DEVICE_MAX_CONNECTIONS=1 > $A/onequeue.log 2>&1; el "onequeue rc=$?"; b=$((b + 30))
timeout $(left $((b + 30))) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --iters 5 --warmup 2 --max 8M --timeout 40 --out $A/gpu-mps --configs tcpxr-gpu > $A/gpu-mps.log 2>&1; el "gpu-mps rc=$?"
