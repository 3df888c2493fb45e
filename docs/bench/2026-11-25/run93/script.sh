#!/bin/bash
# run93 on one GPU (nvidia-h200, 16 cores): one mid-sized inline message per NCCL thread at a time
# (dist/ii, uncommitted: a second one, e.g. on another channel, goes to the stripes) against
# ddf0b7f (dist); all_reduce and sendrecv 32 KiB - 1 MiB, 50 iterations, under MPS, alternated
# four times; Socket 1x1/2x2 four times; bulk 2 MiB - 1 GiB once each.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run93.sh)
R=${OUT:-/tmp/out}; A=/tmp/run93; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run93.tgz -C /tmp run93; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
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
for i in 1 2 3 4; do
  m s$i $((b + 14)) --configs socket-1x1,socket-2x2; b=$((b + 14))
  m d$i $((b + 8)) --configs tcpxr-host; b=$((b + 8))
  m ii$i $((b + 8)) --configs tcpxr-host --plugin-dir dist/ii; b=$((b + 8))
done
bulk(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --iters 10 --warmup 3 --min 2M --max 1G --timeout 90 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
bulk bd $((b + 25)) --configs tcpxr-host --plugin-dir dist; b=$((b + 25))
bulk bii $((b + 25)) --configs tcpxr-host --plugin-dir dist/ii; b=$((b + 25))
