#!/bin/bash
# run120 on one GPU (nvidia-h200, 16 cores): 2922b5c plus tcpxr setting NCCL_PAT_ENABLE=0 with
# device unpack (uncommitted). Every collective nccl-tests has, host and GPU buffers, 8 B - 64 MiB,
# 5 iterations: under MPS, and (GPU buffers) with CUDA_DEVICE_MAX_CONNECTIONS=1 without MPS.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run120.sh)
R=${OUT:-/tmp/out}; A=/tmp/run120; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
fin(){ tar czf $R/run120.tgz -C /tmp run120; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
NT=ncclTests/nccl-tests/build
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
el "$(cat $A/nccl-tests-build.txt)"
ops="--ops all_reduce,sendrecv,broadcast,reduce,all_gather,reduce_scatter,alltoall --iters 5 --warmup 2 --max 64M --timeout 60"
timeout 250 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist $ops --out $A/mps --configs tcpxr-host,tcpxr-gpu --env NCCL_DEBUG_SUBSYS=INIT,NET,TUNING > $A/mps.log 2>&1; el "mps rc=$?"
grep -h "PAT_ENABLE\|PROTO unset" $A/mps/logs/*tcpxr-gpu* | sed 's/^[^]]*\] //' | sort | uniq -c | tee -a $A/steps.txt
grep -h "Algo PAT" $A/mps/logs/*tcpxr-gpu* | sed 's/^[^]]*\] //' | sort | uniq -c | head -3 | tee -a $A/steps.txt
timeout 250 python3 ncclTests/run_nccl_tests.py --one-gpu --nccl-tests $NT --plugin-dir dist $ops --out $A/onequeue --configs tcpxr-gpu --env CUDA_DEVICE_MAX_CONNECTIONS=1 > $A/onequeue.log 2>&1; el "onequeue rc=$?"
