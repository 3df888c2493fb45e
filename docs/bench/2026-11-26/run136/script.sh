#!/bin/bash
# run136 on one GPU (nvidia-h200, 16 cores): 5dcfea3, the session's final code. Issue 14's table
# (all_reduce and sendrecv 8 B - 1 GiB, NCCL Socket default, 1x1, 2x2, 4x4 and tcpxr in one run,
# 20 iterations and 5 warm-up, under MPS), then all_gather and reduce_scatter 64 KiB - 64 MiB with
# Socket's four tunings beside (20 iterations), and 256 idle connections' threads.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run136.sh)
R=${OUT:-/tmp/out}; A=/tmp/run136; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
fin(){ tar czf $R/run136.tgz -C /tmp run136; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt; } > $A/machine.txt 2>&1
NT=ncclTests/nccl-tests/build
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
el "$(cat $A/nccl-tests-build.txt)"
timeout 60 dist/deps/idle --nocapture > $A/idle-256.txt 2>&1; el "idle rc=$? $(grep connections $A/idle-256.txt)"
timeout 330 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --iters 20 --warmup 5 --min 8 --max 1G --timeout 200 --out $A/table --configs socket,socket-1x1,socket-2x2,socket-4x4,tcpxr-host > $A/table.log 2>&1; el "table rc=$?"
timeout 150 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --ops all_gather,reduce_scatter --iters 20 --warmup 5 --min 64K --max 64M --timeout 60 --out $A/agrs --configs socket,socket-1x1,socket-2x2,socket-4x4,tcpxr-host > $A/agrs.log 2>&1; el "agrs rc=$?"
