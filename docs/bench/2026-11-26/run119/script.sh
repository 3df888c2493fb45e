#!/bin/bash
# run119 on one GPU (nvidia-h200, 16 cores): why all_gather and reduce_scatter with GPU buffers
# (tcpxr-gpu, device unpack) had #wrong > 0 at 32 B - 1 MiB in run118. cbfc137 (dist) against
# 301ed26 (dist/old), with NCCL's TUNING log, with NCCL_ALGO=^PAT, with tcpxr's tuner off;
# 8 B - 4 MiB, 3 iterations, under MPS.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run119.sh)
R=${OUT:-/tmp/out}; A=/tmp/run119; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
fin(){ tar czf $R/run119.tgz -C /tmp run119; cat $A/steps.txt; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/commit.txt dist/old/commit.txt; } > $A/machine.txt 2>&1
NT=ncclTests/nccl-tests/build
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
el "$(cat $A/nccl-tests-build.txt)"
r(){ out=$1; shift; timeout 60 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --ops all_gather,reduce_scatter --iters 3 --warmup 1 --max 4M --timeout 25 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$? $(grep -h -c '#wrong > 0' $A/$out.log) wrong-lines; $(grep -h 'FAILED' $A/$out.log | grep -v 'missing rows: 8 B, 16 B$' | head -4 | tr '\n' ' ')"; }
r new --plugin-dir dist --configs tcpxr-gpu --env NCCL_DEBUG_SUBSYS=INIT,NET,TUNING
grep -h "AllGather\|ReduceScatter" $A/new/logs/* | sed 's/^[^]]*\] //' | sort | uniq -c | head -30 | tee -a $A/steps.txt
r old --plugin-dir dist/old --configs tcpxr-gpu --env NCCL_DEBUG_SUBSYS=INIT,NET,TUNING
grep -h "AllGather\|ReduceScatter" $A/old/logs/* | sed 's/^[^]]*\] //' | sort | uniq -c | head -30 | tee -a $A/steps.txt
r nopat --plugin-dir dist --configs tcpxr-gpu --env NCCL_ALGO=^PAT
r ring --plugin-dir dist --configs tcpxr-gpu --env NCCL_ALGO=Ring
r notuner --plugin-dir dist --configs tcpxr-gpu --env NCCL_TCPXR_TUNER=0
r host --plugin-dir dist --configs tcpxr-host --env NCCL_DEBUG_SUBSYS=INIT,NET,TUNING
grep -h "AllGather\|ReduceScatter" $A/host/logs/* | sed 's/^[^]]*\] //' | sort | uniq -c | head -30 | tee -a $A/steps.txt
