#!/bin/bash
# run132 on one GPU (nvidia-h200, 16 cores): f047590 (the library of 5d4dc68). The all_reduce band
# (128 KiB - 2 MiB, 100 iterations) on NCCL's ring Simple with 2 channels, as Socket runs it
# (NCCL_TCPXR_TUNER=0 NCCL_ALGO=Ring NCCL_PROTO=Simple NCCL_MIN_NCHANNELS=2 NCCL_MAX_NCHANNELS=2),
# with the idle inline limit at its default (64 KiB: one 64 KiB message of a thread inline, the
# other channel's to the I/O pool), 16 KiB and 0 (every 64 KiB message to the pool), against
# tcpxr's defaults (its tuner: 1 channel to 512 KiB) and Socket 1x1; alternated twice.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run132.sh)
R=${OUT:-/tmp/out}; A=/tmp/run132; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
fin(){ tar czf $R/run132.tgz -C /tmp run132; cat $A/steps.txt; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt; } > $A/machine.txt 2>&1
NT=ncclTests/nccl-tests/build
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
el "$(cat $A/nccl-tests-build.txt)"
n(){ out=$1; shift; timeout 200 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --ops all_reduce --iters 100 --warmup 10 --min 128K --max 2M --out $A/$out --timeout 60 "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
two="--env NCCL_TCPXR_TUNER=0 --env NCCL_ALGO=Ring --env NCCL_PROTO=Simple --env NCCL_MIN_NCHANNELS=2 --env NCCL_MAX_NCHANNELS=2"
for i in 1 2; do
  n def$i --configs socket-1x1,tcpxr-host
  n two$i --configs tcpxr-host $two
  n two16k$i --configs tcpxr-host $two --env NCCL_TCPXR_INLINE_IDLE_BYTES=16K
  n two0$i --configs tcpxr-host $two --env NCCL_TCPXR_INLINE_IDLE_BYTES=0
done
