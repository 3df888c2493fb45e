#!/bin/bash
# run142 on one GPU (nvidia-h200, 16 cores): b6ed9ac. sendrecv 64 KiB - 1 MiB, 100 iterations,
# alternated four times: tcpxr's default (point-to-point connections inline up to 128 KiB while
# idle, one such message per NCCL thread at a time) against NCCL_TCPXR_INLINE_IDLE_P2P_BYTES=64K
# (a 256 KiB sendrecv's two 128 KiB messages both to the I/O pool); Socket 1x1 and 2x2 beside.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run142.sh)
R=${OUT:-/tmp/out}; A=/tmp/run142; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
fin(){ tar czf $R/run142.tgz -C /tmp run142; cat $A/steps.txt; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt; } > $A/machine.txt 2>&1
NT=ncclTests/nccl-tests/build
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
el "$(cat $A/nccl-tests-build.txt)"
n(){ out=$1; shift; timeout 100 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --ops sendrecv --iters 100 --warmup 10 --min 64K --max 1M --out $A/$out --timeout 60 "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
for i in 1 2 3 4; do
  n def$i --configs socket-1x1,socket-2x2,tcpxr-host
  n p64k$i --configs tcpxr-host --env NCCL_TCPXR_INLINE_IDLE_P2P_BYTES=64K
done
