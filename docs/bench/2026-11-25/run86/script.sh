#!/bin/bash
# run86 on one GPU (nvidia-h200, 16 cores): what holds bulk at 13 GB/s. ddf0b7f (= 2bb4862's code),
# all_reduce and sendrecv 128 MiB - 1 GiB under MPS: defaults, NCCL_MIN_NCHANNELS=8 and 16,
# NCCL_BUFFSIZE=8 MiB, NCCL_TCPXR_STRIPES=8, alternated twice; Socket 2x2 once.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run86.sh)
R=${OUT:-/tmp/out}; A=/tmp/run86; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run86.tgz -C /tmp run86; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
B=$!
wait $B; el "$(cat $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build
bulk(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --iters 10 --warmup 3 --min 128M --max 1G --timeout 90 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
b=$(( $(date +%s)-T0 ))
for i in 1 2; do
  bulk d$i $((b + 20)) --configs tcpxr-host; b=$((b + 20))
  bulk c8$i $((b + 20)) --configs tcpxr-host --env NCCL_MIN_NCHANNELS=8; b=$((b + 20))
  bulk c16$i $((b + 20)) --configs tcpxr-host --env NCCL_MIN_NCHANNELS=16; b=$((b + 20))
  bulk bs8$i $((b + 20)) --configs tcpxr-host --env NCCL_BUFFSIZE=8388608; b=$((b + 20))
  bulk st8$i $((b + 20)) --configs tcpxr-host --env NCCL_TCPXR_STRIPES=8; b=$((b + 20))
done
bulk s $((b + 40)) --configs socket-2x2
