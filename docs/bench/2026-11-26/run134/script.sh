#!/bin/bash
# run134 on one GPU (nvidia-h200, 16 cores): the band change (uncommitted on c2405a6, dist) against
# f047590's library (dist/old): the tuner gives all_reduce 2 channels from a 256 KiB share (512 KiB
# on two ranks; was 1 channel to 512 KiB shares) and the idle inline limit's auto is 32 KiB (was
# 64 KiB). 100 iterations, alternated three times: all_reduce 64 KiB - 2 MiB (Socket 1x1 beside),
# sendrecv 64 KiB - 1 MiB, all_gather and reduce_scatter 64 KiB - 4 MiB. Then GPU buffers through
# NCCL with every collective (8 B - 8 MiB) with one hardware queue and under MPS (the new library).
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run134.sh)
R=${OUT:-/tmp/out}; A=/tmp/run134; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
fin(){ tar czf $R/run134.tgz -C /tmp run134; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt dist/old/commit.txt; } > $A/machine.txt 2>&1
NT=ncclTests/nccl-tests/build
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
el "$(cat $A/nccl-tests-build.txt)"
n(){ out=$1; shift; timeout 100 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --iters 100 --warmup 10 --out $A/$out --timeout 60 "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
for i in 1 2 3; do
  n ar-new$i --plugin-dir dist --ops all_reduce --min 64K --max 2M --configs socket-1x1,tcpxr-host --env NCCL_DEBUG_SUBSYS=TUNING
  n ar-old$i --plugin-dir dist/old --ops all_reduce --min 64K --max 2M --configs tcpxr-host
  n sr-new$i --plugin-dir dist --ops sendrecv --min 64K --max 1M --configs tcpxr-host
  n sr-old$i --plugin-dir dist/old --ops sendrecv --min 64K --max 1M --configs tcpxr-host
  n ag-new$i --plugin-dir dist --ops all_gather,reduce_scatter --min 64K --max 4M --configs tcpxr-host
  n ag-old$i --plugin-dir dist/old --ops all_gather,reduce_scatter --min 64K --max 4M --configs tcpxr-host
done
timeout 100 python3 ncclTests/run_nccl_tests.py --one-gpu --nccl-tests $NT --plugin-dir dist --ops all_reduce,sendrecv,broadcast,reduce,all_gather,reduce_scatter,alltoall --iters 3 --warmup 1 --max 8M --timeout 30 --out $A/onequeue --configs tcpxr-gpu --env CUDA_DEVICE_MAX_CONNECTIONS=1 > $A/onequeue.log 2>&1; el "onequeue rc=$?"
timeout 100 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --ops all_reduce,sendrecv,broadcast,reduce,all_gather,reduce_scatter,alltoall --iters 3 --warmup 1 --max 8M --timeout 30 --out $A/gpu-mps --configs tcpxr-gpu > $A/gpu-mps.log 2>&1; el "gpu-mps rc=$?"
