#!/bin/bash
# run133 on one GPU (nvidia-h200, 16 cores): f047590 (the library of 5d4dc68). The all_reduce band
# (128 KiB - 1 MiB, 100 iterations), alternated four times: tcpxr's defaults; the idle inline
# limit at 32 KiB (NCCL_TCPXR_INLINE_IDLE_BYTES=32K, so the 64 KiB messages of 2 channels go to the
# I/O pool); that limit with NCCL's ring Simple on 2 channels at every size (NCCL_TCPXR_TUNER=0
# NCCL_ALGO=Ring NCCL_PROTO=Simple NCCL_MIN_NCHANNELS=2 NCCL_MAX_NCHANNELS=2); Socket 1x1.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run133.sh)
R=${OUT:-/tmp/out}; A=/tmp/run133; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
fin(){ tar czf $R/run133.tgz -C /tmp run133; cat $A/steps.txt; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt; } > $A/machine.txt 2>&1
NT=ncclTests/nccl-tests/build
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
el "$(cat $A/nccl-tests-build.txt)"
n(){ out=$1; shift; timeout 200 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --ops all_reduce --iters 100 --warmup 10 --min 128K --max 1M --out $A/$out --timeout 60 "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
two="--env NCCL_TCPXR_TUNER=0 --env NCCL_ALGO=Ring --env NCCL_PROTO=Simple --env NCCL_MIN_NCHANNELS=2 --env NCCL_MAX_NCHANNELS=2"
for i in 1 2 3 4; do
  n def$i --configs socket-1x1,tcpxr-host
  n in32k$i --configs tcpxr-host --env NCCL_TCPXR_INLINE_IDLE_BYTES=32K
  n two32k$i --configs tcpxr-host $two --env NCCL_TCPXR_INLINE_IDLE_BYTES=32K
done
