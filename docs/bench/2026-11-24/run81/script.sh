#!/bin/bash
# run81 on one GPU (nvidia-h200, 16 cores): this session's final library, ae91c88 (spinning idle
# workers back, hand-off waits in the stats), against 611a215 (dist/old), all_reduce and sendrecv
# 8 B - 16 MiB under MPS alternated twice, Socket 1x1 and 2x2 twice; bulk 128 MiB - 1 GiB once each;
# GPU tests (tcpxr's own unpack path) with one hardware queue and under MPS; GPU buffers through
# NCCL (device unpack) likewise; the idle test (256 connections) on 16 cores.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/runNN.sh)
R=${OUT:-/tmp/out}; A=/tmp/run81; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run81.tgz -C /tmp run81; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt; } > $A/machine.txt 2>&1
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
m(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --iters 50 --warmup 10 --min 32K --max 4M --timeout 60 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
b=$(( $(date +%s)-T0 ))
for i in 1 2; do
  m new$i $((b + 14)) --plugin-dir dist --configs tcpxr-host --min 8 --max 16M
  m old$i $((b + 28)) --plugin-dir dist/old --configs tcpxr-host --min 8 --max 16M
  m s$i $((b + 52)) --configs socket-1x1,socket-2x2 --min 8 --max 16M
  b=$((b + 52))
done
timeout $(left $((b + 20))) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --iters 10 --warmup 3 --min 128M --max 1G --timeout 90 --out $A/bnew --configs tcpxr-host > $A/bnew.log 2>&1; el "bnew rc=$?"; b=$((b + 20))
timeout $(left $((b + 20))) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist/old --iters 10 --warmup 3 --min 128M --max 1G --timeout 90 --out $A/bold --configs tcpxr-host > $A/bold.log 2>&1; el "bold rc=$?"; b=$((b + 20))
timeout $(left $((b + 25))) python3 ncclTests/run_nccl_tests.py --one-gpu --nccl-tests $NT --plugin-dir dist --iters 5 --warmup 2 --max 8M --timeout 40 --out $A/onequeue --configs tcpxr-gpu --env CUDA_DEVICE_MAX_CONNECTIONS=1 > $A/onequeue.log 2>&1; el "onequeue rc=$?"
timeout $(left $((b + 45))) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --iters 5 --warmup 2 --max 8M --timeout 40 --out $A/gpu-mps --configs tcpxr-gpu > $A/gpu-mps.log 2>&1; el "gpu-mps rc=$?"
