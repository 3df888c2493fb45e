#!/bin/bash
# run121 on one GPU (nvidia-h200, 16 cores): the tuner holding PAT to 4 channels below bulk too
# (uncommitted on 8a9d08f, dist) against 8a9d08f (dist/prev) and 301ed26 (dist/old): all_gather and
# reduce_scatter 64 KiB - 4 MiB, host buffers, 50 iterations, alternated twice, with NCCL's TUNING log.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run121.sh)
R=${OUT:-/tmp/out}; A=/tmp/run121; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
fin(){ tar czf $R/run121.tgz -C /tmp run121; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/commit.txt dist/prev/commit.txt dist/old/commit.txt; } > $A/machine.txt 2>&1
NT=ncclTests/nccl-tests/build
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
el "$(cat $A/nccl-tests-build.txt)"
r(){ out=$1; shift; timeout 60 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --configs tcpxr-host --ops all_gather,reduce_scatter --iters 50 --warmup 5 --min 64K --max 4M --timeout 40 --out $A/$out --env NCCL_DEBUG_SUBSYS=INIT,NET,TUNING "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
for i in 1 2; do
  r new$i --plugin-dir dist
  r prev$i --plugin-dir dist/prev
  r old$i --plugin-dir dist/old
done
for c in new1 prev1 old1; do echo "== $c"; grep -h "AllGather:" $A/$c/logs/* | sed 's/^[^]]*\] //' | sort | uniq -c | sort -k5 -n; done | tee -a $A/steps.txt
