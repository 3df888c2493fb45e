#!/bin/bash
# run131 on one GPU (nvidia-h200, 16 cores): f047590. (1) tcpxr-bench nccl with its new plain-TCP
# row (4 and 8 connections of 512 KiB messages, 8 in flight; the default pool and 12 threads),
# twice. (2) The all_reduce band (128 KiB - 2 MiB, 100 iterations) with NCCL_TCPXR_INLINE_IDLE_BYTES
# 128 KiB and 256 KiB against the default (64 KiB) on the tuner's 1 channel, Socket 1x1 beside,
# alternated twice.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run131.sh;
# dist/zc/ held zc.c and cpu_sample.py, kept in docs/bench/2026-11-26/run127/zc/)
R=${OUT:-/tmp/out}; A=/tmp/run131; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
fin(){ tar czf $R/run131.tgz -C /tmp run131; cat $A/steps.txt; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt; } > $A/machine.txt 2>&1
NT=ncclTests/nccl-tests/build
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
el "$(cat $A/nccl-tests-build.txt)"
for i in 1 2; do for c in 4 8; do dist/tcpxr-bench nccl --comms $c --sizes 512K --seconds 2; NCCL_TCPXR_IO_THREADS=12 dist/tcpxr-bench nccl --comms $c --sizes 512K --seconds 2; done; done > $A/bench-nccl.txt 2>&1
cat $A/bench-nccl.txt | tee -a $A/steps.txt
n(){ out=$1; shift; timeout 200 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --ops all_reduce --iters 100 --warmup 10 --min 128K --max 2M --out $A/$out --timeout 60 "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
for i in 1 2; do
  n def$i --configs socket-1x1,tcpxr-host
  n in128k$i --configs tcpxr-host --env NCCL_TCPXR_INLINE_IDLE_BYTES=128K
  n in256k$i --configs tcpxr-host --env NCCL_TCPXR_INLINE_IDLE_BYTES=256K
done
