#!/bin/bash
# run98 on one GPU (nvidia-h200, 16 cores): issue 14's table on the session's final library
# (the code of 53adf32: one mid-sized inline message per NCCL thread): all_reduce and sendrecv
# 8 B - 1 GiB, NCCL Socket default, 1x1, 2x2, 4x4 and tcpxr, all in one run, 20 iterations and 5
# warm-up (the issue's own), under MPS.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run98.sh)
R=${OUT:-/tmp/out}; A=/tmp/run98; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
fin(){ tar czf $R/run98.tgz -C /tmp run98; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
B=$!
wait $B; el "$(cat $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build
timeout 540 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --iters 20 --warmup 5 --min 8 --max 1G --timeout 200 --out $A/table --configs socket,socket-1x1,socket-2x2,socket-4x4,tcpxr-host > $A/table.log 2>&1; el "table rc=$?"
