#!/bin/bash
# run108 on one GPU (nvidia-h200, 16 cores): 00ab285's library. Small sendrecv trails Socket at
# 20 iterations (0.80-0.86x in runs 98 and 107) but not at 200 (run 102): a fixed cost per size?
# sendrecv 8 B - 4 KiB, Socket default and tcpxr at -n 20 and -n 200, tcpxr at -n 20 with 50
# warm-up iterations and with no I/O pool, alternated twice.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run108.sh)
R=${OUT:-/tmp/out}; A=/tmp/run108; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run108.tgz -C /tmp run108; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
B=$!
wait $B; el "$(cat $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build
r(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --ops sendrecv --min 8 --max 4K --timeout 60 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
b=$(( $(date +%s)-T0 ))
for i in 1 2; do
  r s20-$i $((b + 12)) --configs socket --iters 20 --warmup 5; b=$((b + 12))
  r t20-$i $((b + 12)) --configs tcpxr-host --iters 20 --warmup 5; b=$((b + 12))
  r s200-$i $((b + 12)) --configs socket --iters 200 --warmup 5; b=$((b + 12))
  r t200-$i $((b + 12)) --configs tcpxr-host --iters 200 --warmup 5; b=$((b + 12))
  r t20w50-$i $((b + 12)) --configs tcpxr-host --iters 20 --warmup 50; b=$((b + 12))
  r t20io0-$i $((b + 12)) --configs tcpxr-host --iters 20 --warmup 5 --env NCCL_TCPXR_IO_THREADS=0; b=$((b + 12))
done
