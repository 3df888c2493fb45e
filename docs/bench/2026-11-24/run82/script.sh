#!/bin/bash
# run82 on one GPU (nvidia-h200, 16 cores): ae91c88 (spinning idle workers, the default: one for
# 200 us) against the same library with NCCL_TCPXR_IO_SPIN_US=0, alternated five times, all_reduce
# and sendrecv 128 KiB - 4 MiB under MPS; Socket 1x1/2x2 twice.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/runNN.sh)
R=${OUT:-/tmp/out}; A=/tmp/run82; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run82.tgz -C /tmp run82; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
B=$!
wait $B; el "$(cat $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build
m(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --iters 50 --warmup 10 --min 32K --max 4M --timeout 60 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
b=$(( $(date +%s)-T0 ))
for i in 1 2 3 4 5; do
  m off$i $((b + 10)) --configs tcpxr-host --min 128K --env NCCL_TCPXR_IO_SPIN_US=0
  m spin$i $((b + 20)) --configs tcpxr-host --min 128K
  b=$((b + 20))
  [ $i -eq 2 -o $i -eq 4 ] && { m s$i $((b + 16)) --configs socket-1x1,socket-2x2 --min 128K; b=$((b + 16)); }
done
