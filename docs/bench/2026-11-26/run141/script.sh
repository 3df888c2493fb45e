#!/bin/bash
# run141 on one GPU (nvidia-h200, 16 cores): the tuner's broadcast/reduce rule (uncommitted on
# 07ab7a3, dist: the ring in Simple for 64-512 KiB) against 07ab7a3 (dist/old). broadcast and reduce
# 32 KiB - 1 MiB, 50 iterations, host buffers, alternated three times (NCCL_DEBUG_SUBSYS=TUNING),
# Socket 2x2 and 4x4 beside; GPU buffers (tcpxr-gpu) the same, twice; then every collective with
# GPU buffers through NCCL (8 B - 8 MiB) with one hardware queue and under MPS (the new library).
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run141.sh)
R=${OUT:-/tmp/out}; A=/tmp/run141; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
fin(){ tar czf $R/run141.tgz -C /tmp run141; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt dist/old/commit.txt; } > $A/machine.txt 2>&1
NT=ncclTests/nccl-tests/build
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
el "$(cat $A/nccl-tests-build.txt)"
n(){ out=$1; shift; timeout 100 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --ops broadcast,reduce --iters 50 --warmup 5 --min 32K --max 1M --out $A/$out --timeout 60 --env NCCL_DEBUG_SUBSYS=TUNING "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
for i in 1 2 3; do
  n sock$i --plugin-dir dist --configs socket-2x2,socket-4x4
  n new$i --plugin-dir dist --configs tcpxr-host
  n old$i --plugin-dir dist/old --configs tcpxr-host
done
for i in 1 2; do
  n gnew$i --plugin-dir dist --configs tcpxr-gpu
  n gold$i --plugin-dir dist/old --configs tcpxr-gpu
done
timeout 100 python3 ncclTests/run_nccl_tests.py --one-gpu --nccl-tests $NT --plugin-dir dist --ops all_reduce,sendrecv,broadcast,reduce,all_gather,reduce_scatter,alltoall --iters 3 --warmup 1 --max 8M --timeout 30 --out $A/onequeue --configs tcpxr-gpu --env CUDA_DEVICE_MAX_CONNECTIONS=1 > $A/onequeue.log 2>&1; el "onequeue rc=$?"
timeout 100 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --ops all_reduce,sendrecv,broadcast,reduce,all_gather,reduce_scatter,alltoall --iters 3 --warmup 1 --max 8M --timeout 30 --out $A/gpu-mps --configs tcpxr-host,tcpxr-gpu > $A/gpu-mps.log 2>&1; el "gpu-mps rc=$?"
