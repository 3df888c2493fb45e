#!/bin/bash
# run88 on one GPU (nvidia-h200, 16 cores): the band's hand-offs. ddf0b7f (dist: every striped
# chunk to the I/O pool) against sends of at most 128 KiB moved by NCCL's thread (dist/ps,
# uncommitted) and against NCCL_TCPXR_HANDOFF_BYTES=131072 (both directions); all_reduce and
# sendrecv 128 KiB - 4 MiB under MPS, alternated three times; Socket 1x1/2x2 three times; bulk once.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run88.sh)
R=${OUT:-/tmp/out}; A=/tmp/run88; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run88.tgz -C /tmp run88; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt dist/ps/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
B=$!
wait $B; el "$(cat $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build
m(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --iters 50 --warmup 10 --min 128K --max 4M --timeout 60 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
b=$(( $(date +%s)-T0 ))
bulk(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --iters 10 --warmup 3 --min 128M --max 1G --timeout 90 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
for i in 1 2 3; do
  m s$i $((b + 14)) --configs socket-1x1,socket-2x2; b=$((b + 14))
  m d$i $((b + 10)) --configs tcpxr-host; b=$((b + 10))
  m ps$i $((b + 10)) --configs tcpxr-host --plugin-dir dist/ps; b=$((b + 10))
  m h$i $((b + 10)) --configs tcpxr-host --env NCCL_TCPXR_HANDOFF_BYTES=131072; b=$((b + 10))
done
bulk bd $((b + 20)) --configs tcpxr-host; b=$((b + 20))
bulk bps $((b + 20)) --configs tcpxr-host --plugin-dir dist/ps; b=$((b + 20))
bulk bh $((b + 20)) --configs tcpxr-host --env NCCL_TCPXR_HANDOFF_BYTES=131072; b=$((b + 20))
