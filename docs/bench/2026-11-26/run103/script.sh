#!/bin/bash
# run103 on one GPU (nvidia-h200, 16 cores): e839f10's library. (1) issue 14's band with less
# noise: all_reduce and sendrecv 64 KiB - 8 MiB, 100 iterations, all four Socket tunings and
# tcpxr in one invocation, twice. (2) bulk (64 MiB - 1 GiB, 10 iterations) under the NCCL
# settings tcpxr cannot make itself (NCCL reads them before it loads a net plugin):
# NCCL_NCHANNELS_PER_NET_PEER=4 for sendrecv, NCCL_MIN_NCHANNELS=8 for all_reduce, tcpxr beside
# Socket 1x1 and 2x2 with the same setting.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run103.sh)
R=${OUT:-/tmp/out}; A=/tmp/run103; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run103.tgz -C /tmp run103; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
B=$!
wait $B; el "$(cat $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build
r(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --timeout 90 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
b=$(( $(date +%s)-T0 ))
for i in 1 2; do
  r band$i $((b + 100)) --iters 100 --warmup 10 --min 64K --max 8M --configs socket,socket-1x1,socket-2x2,socket-4x4,tcpxr-host; b=$((b + 100))
done
for i in 1 2; do
  r sr$i $((b + 20)) --ops sendrecv --iters 10 --warmup 3 --min 64M --max 1G --configs tcpxr-host; b=$((b + 20))
  r srpp$i $((b + 40)) --ops sendrecv --iters 10 --warmup 3 --min 64M --max 1G --configs socket-1x1,socket-2x2,tcpxr-host --env NCCL_NCHANNELS_PER_NET_PEER=4; b=$((b + 40))
  r ar$i $((b + 20)) --ops all_reduce --iters 10 --warmup 3 --min 64M --max 1G --configs tcpxr-host; b=$((b + 20))
  r armin8$i $((b + 40)) --ops all_reduce --iters 10 --warmup 3 --min 64M --max 1G --configs socket-1x1,socket-2x2,tcpxr-host --env NCCL_MIN_NCHANNELS=8; b=$((b + 40))
  r armin8s2$i $((b + 20)) --ops all_reduce --iters 10 --warmup 3 --min 64M --max 1G --configs tcpxr-host --env NCCL_MIN_NCHANNELS=8 --env NCCL_TCPXR_STRIPES=2; b=$((b + 20))
done
