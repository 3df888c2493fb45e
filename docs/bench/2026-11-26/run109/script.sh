#!/bin/bash
# run109 on one GPU (nvidia-h200, 16 cores): 241be22's build (00ab285's code: 6 I/O threads per
# rank here). all_reduce 128 KiB - 2 MiB, 100 iterations: is the tuner's 1 channel at 256-512 KiB
# still right with the smaller pools? tcpxr default, 2 channels (NCCL_MIN_NCHANNELS=2
# NCCL_MAX_NCHANNELS=2: the tuner keeps ring Simple and leaves the count to them), the same with
# NCCL_TCPXR_IO_SPIN_THREADS=2, 1 channel with 2 spinning threads; Socket 1x1; alternated twice.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run109.sh)
R=${OUT:-/tmp/out}; A=/tmp/run109; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run109.tgz -C /tmp run109; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
B=$!
wait $B; el "$(cat $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build
r(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --ops all_reduce --iters 100 --warmup 10 --min 128K --max 2M --timeout 60 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
b=$(( $(date +%s)-T0 ))
for i in 1 2; do
  r s$i $((b + 12)) --configs socket-1x1; b=$((b + 12))
  r d$i $((b + 12)) --configs tcpxr-host --env NCCL_DEBUG_SUBSYS=TUNING; b=$((b + 12))
  r ch2-$i $((b + 12)) --configs tcpxr-host --env NCCL_MIN_NCHANNELS=2 --env NCCL_MAX_NCHANNELS=2 --env NCCL_DEBUG_SUBSYS=TUNING; b=$((b + 12))
  r ch2sp2-$i $((b + 12)) --configs tcpxr-host --env NCCL_MIN_NCHANNELS=2 --env NCCL_MAX_NCHANNELS=2 --env NCCL_TCPXR_IO_SPIN_THREADS=2; b=$((b + 12))
  r sp2-$i $((b + 12)) --configs tcpxr-host --env NCCL_TCPXR_IO_SPIN_THREADS=2; b=$((b + 12))
done
