#!/bin/bash
# run83 on one GPU (nvidia-h200, 16 cores): ce34982 (a chunk for the pool goes whole from its post:
# no header and first byte from NCCL's thread) against ae91c88 (dist/old), all_reduce and sendrecv
# 8 B - 16 MiB under MPS alternated three times, Socket 1x1 and 2x2 twice; bulk once each; the
# hand-off stats at all_reduce 512 KiB for both; GPU tests and GPU buffers through NCCL with one
# hardware queue and under MPS.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/runNN.sh)
R=${OUT:-/tmp/out}; A=/tmp/run83; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run83.tgz -C /tmp run83; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
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
for i in 1 2 3; do
  m new$i $((b + 14)) --plugin-dir dist --configs tcpxr-host --min 8 --max 16M
  m old$i $((b + 28)) --plugin-dir dist/old --configs tcpxr-host --min 8 --max 16M
  b=$((b + 28))
  [ $i -lt 3 ] && { m s$i $((b + 24)) --configs socket-1x1,socket-2x2 --min 8 --max 16M; b=$((b + 24)); }
done
timeout $(left $((b + 20))) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --iters 10 --warmup 3 --min 128M --max 1G --timeout 90 --out $A/bnew --configs tcpxr-host > $A/bnew.log 2>&1; el "bnew rc=$?"; b=$((b + 20))
timeout $(left $((b + 20))) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist/old --iters 10 --warmup 3 --min 128M --max 1G --timeout 90 --out $A/bold --configs tcpxr-host > $A/bold.log 2>&1; el "bold rc=$?"; b=$((b + 20))
one(){ out=$1; dir=$2; timeout 40 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir $dir --configs tcpxr-host --ops all_reduce --min 512K --max 512K --iters 500 --warmup 20 --timeout 30 --out $A/$out > $A/$out.log 2>&1; el "$out rc=$?"
  { echo "== $out"; grep -h "stats send\|stats receive" $A/$out/logs/* | grep -v " 0 messages" | sed 's/^[^]]*\] //; s/queued ahead avg [0-9.]* max [0-9]*, //g'; } >> $A/stats.txt; b=$((b + 12)); }
one st-new dist; one st-old dist/old
timeout $(left $((b + 25))) python3 ncclTests/run_nccl_tests.py --one-gpu --nccl-tests $NT --plugin-dir dist --iters 5 --warmup 2 --max 8M --timeout 40 --out $A/onequeue --configs tcpxr-gpu --env CUDA_DEVICE_MAX_CONNECTIONS=1 > $A/onequeue.log 2>&1; el "onequeue rc=$?"
timeout $(left $((b + 45))) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --iters 5 --warmup 2 --max 8M --timeout 40 --out $A/gpu-mps --configs tcpxr-gpu > $A/gpu-mps.log 2>&1; el "gpu-mps rc=$?"
