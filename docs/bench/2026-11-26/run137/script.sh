#!/bin/bash
# run137 on one GPU (nvidia-h200, 16 cores): 5dcfea3. all_gather and reduce_scatter of 128 KiB -
# 4 MiB, where run 136 had Socket 2x2/4x4 at 0.6-0.7x tcpxr's time (512 KiB - 1 MiB): tcpxr's
# default (its tuner keeps these on 4 channels), NCCL_MIN/MAX_NCHANNELS=2, =8, and
# NCCL_TCPXR_TUNER=0 (NCCL's own choice over the 8 channels tcpxr has it build); Socket 2x2 and
# 4x4 beside; NCCL_DEBUG_SUBSYS=TUNING; 50 iterations, alternated three times.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run137.sh)
R=${OUT:-/tmp/out}; A=/tmp/run137; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
fin(){ tar czf $R/run137.tgz -C /tmp run137; cat $A/steps.txt; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt; } > $A/machine.txt 2>&1
NT=ncclTests/nccl-tests/build
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
el "$(cat $A/nccl-tests-build.txt)"
n(){ out=$1; shift; timeout 100 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --ops all_gather,reduce_scatter --iters 50 --warmup 5 --min 128K --max 4M --out $A/$out --timeout 60 --env NCCL_DEBUG_SUBSYS=TUNING "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
for i in 1 2 3; do
  n sock$i --configs socket-2x2,socket-4x4
  n def$i --configs tcpxr-host
  n ch2$i --configs tcpxr-host --env NCCL_MIN_NCHANNELS=2 --env NCCL_MAX_NCHANNELS=2
  n ch8$i --configs tcpxr-host --env NCCL_MIN_NCHANNELS=8 --env NCCL_MAX_NCHANNELS=8
  n nat$i --configs tcpxr-host --env NCCL_TCPXR_TUNER=0
done
