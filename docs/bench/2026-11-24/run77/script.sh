#!/bin/bash
# run77 on one GPU (nvidia-h200, 16 cores): an experiment on 611a215 (uncommitted): an I/O worker
# blocked in the middle of a chunk retries for up to 30 us before it re-arms the socket and sleeps
# (MID_CHUNK_SPIN in transport/socket/stripe.rs), against 611a215 (dist/old); all_reduce and
# sendrecv 32 KiB - 16 MiB under MPS alternated three times, Socket 1x1/2x2 twice; bulk each once.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/runNN.sh)
R=${OUT:-/tmp/out}; A=/tmp/run77; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run77.tgz -C /tmp run77; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
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
  m new$i $((b + 12)) --plugin-dir dist --configs tcpxr-host --max 16M
  m old$i $((b + 24)) --plugin-dir dist/old --configs tcpxr-host --max 16M
  b=$((b + 24))
  [ $i -lt 3 ] && { m s$i $((b + 20)) --configs socket-1x1,socket-2x2 --max 16M; b=$((b + 20)); }
done
bulk(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --iters 10 --warmup 3 --min 128M --max 1G --timeout 90 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
bulk bnew $((b + 16)) --plugin-dir dist --configs tcpxr-host
bulk bold $((b + 32)) --plugin-dir dist/old --configs tcpxr-host; b=$((b + 32))
