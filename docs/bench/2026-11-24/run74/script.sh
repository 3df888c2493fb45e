#!/bin/bash
# run74 on one GPU (nvidia-h200, 16 cores): commit 5512f2b. all_reduce 4 KiB - 4 MiB under MPS:
# tcpxr's tuner (ring Simple on 1-2 channels in the band) against the tuner off with NCCL_PROTO=Simple
# (NCCL's own channel count for Simple over tcpxr: 4), alternated three times; Socket 1x1 and 2x2.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/runNN.sh)
R=${OUT:-/tmp/out}; A=/tmp/run74; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run74.tgz -C /tmp run74; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, in the background, logging to nccl-tests-build.txt; that step is left out of
# this copy: the project commits no script that builds nccl-tests. ncclTests/README.md says how.)
B=$!
wait $B; el "$(cat $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build
m(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --iters 50 --warmup 10 --min 32K --max 4M --timeout 60 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
b=$(( $(date +%s)-T0 ))
for i in 1 2 3; do
  m def$i $((b + 12)) --configs tcpxr-host --ops all_reduce --min 4K
  m simple$i $((b + 24)) --configs tcpxr-host --ops all_reduce --min 4K --env NCCL_TCPXR_TUNER=0 --env NCCL_PROTO=Simple
  b=$((b + 24))
done
m s1 $((b + 16)) --configs socket-1x1,socket-2x2 --ops all_reduce --min 4K
