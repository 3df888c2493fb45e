#!/bin/bash
# GPU run P on one GPU (nvidia-h200): ncclTests/hazard_check.py as committed (issue 13's check
# through NCCL: tcpxr-gpu with one hardware queue and under MPS, v7+ against the v6 shim).
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/out}; A=/tmp/runP; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
fin(){ tar czf $R/runP.tgz -C /tmp runP; cat $A/steps.txt; tail -8 $A/hazard.log; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the project
# commits no script that builds nccl-tests. ncclTests/README.md says how to build it.)
el "$(tail -1 $A/nccl-tests-build.txt)"
timeout 420 python3 ncclTests/hazard_check.py --nccl-tests ncclTests/nccl-tests/build --plugin-dir dist --out $A/hazard > $A/hazard.log 2>&1; el "hazard_check rc=$?"
