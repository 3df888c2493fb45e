#!/bin/bash
# run72 on one GPU (nvidia-h200, 16 cores): commit 5512f2b. The mid band (32 KiB - 4 MiB) under MPS
# with the tuner's 1-channel rule in place, against the chunk size (128 KiB, 64 KiB: a message of the
# band then spreads over several stripes and I/O threads) and against NCCL's own channel choice
# (tuner off), alternated twice; Socket 1x1 and 2x2 beside.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/runNN.sh)
R=${OUT:-/tmp/out}; A=/tmp/run72; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run72.tgz -C /tmp run72; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
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
for i in 1 2; do
  m def$i $((b + 15)) --configs tcpxr-host
  m chunk128k$i $((b + 30)) --configs tcpxr-host --env NCCL_TCPXR_CHUNK_BYTES=131072
  m chunk64k$i $((b + 45)) --configs tcpxr-host --env NCCL_TCPXR_CHUNK_BYTES=65536
  m notuner$i $((b + 60)) --configs tcpxr-host --env NCCL_TCPXR_TUNER=0
  m s$i $((b + 85)) --configs socket-1x1,socket-2x2
  b=$((b + 85))
done
{ which perf strace ltrace gdb bpftrace; } > $A/tools.txt 2>&1
