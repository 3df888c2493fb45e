#!/bin/bash
# run140 on one GPU (nvidia-h200, 16 cores): 07ab7a3. broadcast and reduce of 64 KiB - 4 MiB, as
# run 138 did all_gather and reduce_scatter: tcpxr's default, NCCL_ALGO=Ring NCCL_PROTO=Simple on
# 4, 2 and 1 channels (NCCL_MIN/MAX_NCHANNELS); Socket 2x2 and 4x4 beside; NCCL_DEBUG_SUBSYS=TUNING;
# 50 iterations, alternated three times.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run140.sh)
R=${OUT:-/tmp/out}; A=/tmp/run140; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
fin(){ tar czf $R/run140.tgz -C /tmp run140; cat $A/steps.txt; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt; } > $A/machine.txt 2>&1
NT=ncclTests/nccl-tests/build
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
el "$(cat $A/nccl-tests-build.txt)"
n(){ out=$1; shift; timeout 100 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --ops broadcast,reduce --iters 50 --warmup 5 --min 64K --max 4M --out $A/$out --timeout 60 --env NCCL_DEBUG_SUBSYS=TUNING "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
rs="--env NCCL_ALGO=Ring --env NCCL_PROTO=Simple"
for i in 1 2 3; do
  n sock$i --configs socket-2x2,socket-4x4
  n def$i --configs tcpxr-host
  n rs4$i --configs tcpxr-host $rs
  n rs2$i --configs tcpxr-host $rs --env NCCL_MIN_NCHANNELS=2 --env NCCL_MAX_NCHANNELS=2
  n rs1$i --configs tcpxr-host $rs --env NCCL_MIN_NCHANNELS=1 --env NCCL_MAX_NCHANNELS=1
done
