#!/bin/bash
# run91 on one GPU (nvidia-h200, 16 cores): the 256 KiB all_reduce's 64 KiB messages, sent inline
# while the connection is idle (NCCL_TCPXR_INLINE_IDLE_BYTES auto = 65536 here) or striped through
# the I/O pool (=32768, =0). ddf0b7f; all_reduce and sendrecv 32 KiB - 1 MiB, 50 iterations,
# under MPS, alternated three times; Socket 1x1/2x2 three times.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run91.sh)
R=${OUT:-/tmp/out}; A=/tmp/run91; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run91.tgz -C /tmp run91; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
B=$!
wait $B; el "$(cat $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build
m(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --iters 50 --warmup 10 --min 32K --max 1M --timeout 60 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
b=$(( $(date +%s)-T0 ))
for i in 1 2 3; do
  m s$i $((b + 14)) --configs socket-1x1,socket-2x2; b=$((b + 14))
  m d$i $((b + 8)) --configs tcpxr-host; b=$((b + 8))
  m i32$i $((b + 8)) --configs tcpxr-host --env NCCL_TCPXR_INLINE_IDLE_BYTES=32768; b=$((b + 8))
  m i0$i $((b + 8)) --configs tcpxr-host --env NCCL_TCPXR_INLINE_IDLE_BYTES=0; b=$((b + 8))
done
