#!/bin/bash
# run113 on one GPU (nvidia-h200, 16 cores): the receive baton (uncommitted on dfc56b6, dist/wk:
# a receive handed to the I/O pool before its data makes one idle worker spin if none does, so
# the data is read without a wake-up on its critical path) against 00ab285's code (dist).
# all_reduce and sendrecv 128 KiB - 8 MiB, 100 iterations, alternated four times; bulk 256 MiB -
# 1 GiB twice.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run113.sh)
R=${OUT:-/tmp/out}; A=/tmp/run113; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run113.tgz -C /tmp run113; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt dist/wk/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
B=$!
wait $B; el "$(cat $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build
r(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --configs tcpxr-host --timeout 90 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
band="--iters 100 --warmup 10 --min 128K --max 8M"; bulk="--iters 10 --warmup 3 --min 256M --max 1G"
b=$(( $(date +%s)-T0 ))
for i in 1 2 3 4; do
  r d$i $((b + 12)) $band --plugin-dir dist; b=$((b + 12))
  r wk$i $((b + 12)) $band --plugin-dir dist/wk; b=$((b + 12))
done
for i in 1 2; do
  r bd$i $((b + 25)) $bulk --plugin-dir dist; b=$((b + 25))
  r bwk$i $((b + 25)) $bulk --plugin-dir dist/wk; b=$((b + 25))
done
