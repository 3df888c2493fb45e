#!/bin/bash
# run125 on one GPU (nvidia-h200, 16 cores): what tcpxr's 8 channels cost in memory. 61017e6 (dist)
# against 301ed26 (dist/old), all_reduce and sendrecv 8 B - 64 MiB, 3 iterations, host buffers,
# under MPS, with NCCL's ALLOC log; and each rank's VmRSS / VmLck sampled at the end of the run.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run125.sh)
R=${OUT:-/tmp/out}; A=/tmp/run125; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
fin(){ tar czf $R/run125.tgz -C /tmp run125; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/commit.txt dist/old/commit.txt; } > $A/machine.txt 2>&1
NT=ncclTests/nccl-tests/build
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
el "$(cat $A/nccl-tests-build.txt)"
r(){ out=$1; shift; timeout 90 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --configs tcpxr-host --ops all_reduce,sendrecv --iters 3 --warmup 1 --max 64M --timeout 60 --out $A/$out --env NCCL_DEBUG_SUBSYS=INIT,NET,ALLOC "$@" > $A/$out.log 2>&1 &
  P=$!; peak=""; while kill -0 $P 2>/dev/null; do for p in $(pgrep -f all_reduce_perf) $(pgrep -f sendrecv_perf); do grep -h "VmRSS\|VmLck\|VmPin" /proc/$p/status 2>/dev/null | tr -s ' ' | tr '\n' ' ' | sed "s/^/$p /"; echo; done >> $A/$out-mem.txt; sleep 0.5; done; wait $P; el "$out rc=$?"; }
r new --plugin-dir dist
r old --plugin-dir dist/old
for c in new old; do echo "== $c: max VmRSS kB per process $(awk '{for(i=1;i<=NF;i++) if($i=="VmRSS:") print $(i+1)}' $A/$c-mem.txt | sort -n | tail -1), max VmLck+VmPin $(awk '{s=0; for(i=1;i<=NF;i++) if($i=="VmLck:"||$i=="VmPin:") s+=$(i+1); print s}' $A/$c-mem.txt | sort -n | tail -1)"; grep -h "Allocated\|alloc" $A/$c/logs/*all_reduce* 2>/dev/null | sed 's/^[^]]*\] //' | awk '{print $3, $4, $5, $6, $7, $8}' | sort | uniq -c | sort -rn | head -8; done | tee -a $A/steps.txt
