#!/bin/bash
# run75 on one GPU (nvidia-h200, 16 cores): commit 5b7852b (the tuner's band from a per-rank share
# of 8 KiB, Simple on NCCL's own channel count under 32 KiB) against 5512f2b (dist/old), all_reduce
# 4 KiB - 4 MiB under MPS alternated three times, Socket 1x1 and 2x2 twice; NCCL's choice per size
# (NCCL_DEBUG_SUBSYS=TUNING); GPU buffers (device unpack) with one hardware queue and under MPS.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/runNN.sh)
R=${OUT:-/tmp/out}; A=/tmp/run75; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run75.tgz -C /tmp run75; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, in the background, logging to nccl-tests-build.txt; that step is left out of
# this copy: the project commits no script that builds nccl-tests. ncclTests/README.md says how.)
B=$!
wait $B; el "$(cat $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build
m(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --iters 50 --warmup 10 --min 32K --max 4M --timeout 60 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
timeout 40 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --iters 5 --warmup 2 --ops all_reduce --min 4K --max 128K --timeout 30 --out $A/tune-new --configs tcpxr-host --env NCCL_DEBUG_SUBSYS=TUNING > $A/tune-new.log 2>&1; el "tune-new rc=$?"
grep -h "Bytes -> Algo" $A/tune-new/logs/* | sed 's/^[^]]*\] //' | sort | uniq -c > $A/tuning.txt
b=$(( $(date +%s)-T0 ))
for i in 1 2 3; do
  m new$i $((b + 12)) --plugin-dir dist --configs tcpxr-host --ops all_reduce --min 4K
  m old$i $((b + 24)) --plugin-dir dist/old --configs tcpxr-host --ops all_reduce --min 4K
  b=$((b + 24))
  [ $i -lt 3 ] && { m s$i $((b + 16)) --configs socket-1x1,socket-2x2 --ops all_reduce --min 4K; b=$((b + 16)); }
done
timeout $(left $((b + 25))) python3 ncclTests/run_nccl_tests.py --one-gpu --nccl-tests $NT --plugin-dir dist --iters 5 --warmup 2 --max 8M --timeout 40 --out $A/onequeue --configs tcpxr-gpu --env CUDA_DEVICE_MAX_CONNECTIONS=1 > $A/onequeue.log 2>&1; el "onequeue rc=$?"
timeout $(left $((b + 45))) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --iters 5 --warmup 2 --max 8M --timeout 40 --out $A/gpu-mps --configs tcpxr-gpu > $A/gpu-mps.log 2>&1; el "gpu-mps rc=$?"
