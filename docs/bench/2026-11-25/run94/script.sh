#!/bin/bash
# run94 on one GPU (nvidia-h200, 16 cores): run 93 again, narrower and more often: dist/ii (one
# mid-sized inline message per NCCL thread at a time, uncommitted) against ddf0b7f (dist),
# all_reduce and sendrecv 128 KiB - 1 MiB alternated six times, Socket 1x1 three times; bulk
# 128 MiB - 1 GiB alternated twice.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run94.sh)
R=${OUT:-/tmp/out}; A=/tmp/run94; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run94.tgz -C /tmp run94; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt dist/ii/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
B=$!
wait $B; el "$(cat $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build
m(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --iters 50 --warmup 10 --min 32K --max 1M --timeout 60 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
b=$(( $(date +%s)-T0 ))
for i in 1 2 3 4 5 6; do
  [ $((i % 2)) = 1 ] && { m s$i $((b + 10)) --configs socket-1x1 --min 128K; b=$((b + 10)); }
  m d$i $((b + 7)) --configs tcpxr-host --min 128K; b=$((b + 7))
  m ii$i $((b + 7)) --configs tcpxr-host --min 128K --plugin-dir dist/ii; b=$((b + 7))
done
bulk(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --iters 10 --warmup 3 --min 128M --max 1G --timeout 90 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
for i in 1 2; do
  bulk bd$i $((b + 20)) --configs tcpxr-host --plugin-dir dist; b=$((b + 20))
  bulk bii$i $((b + 20)) --configs tcpxr-host --plugin-dir dist/ii; b=$((b + 20))
done
