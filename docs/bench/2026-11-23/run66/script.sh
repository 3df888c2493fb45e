#!/bin/bash
# run66 on one GPU (nvidia-h200, 16 cores), two ranks as two NCCL hosts under MPS: should tcpxr's
# tuner put the all_reduce band on 1 channel instead of 2? Run 61 saw 1 channel (Simple) at 223-226 us
# for 512 KiB against 243-270 on 2, slower at 128-256 KiB. Default (tuner: ring Simple, at most 2
# channels) against NCCL_MAX_NCHANNELS=1 (the tuner then leaves channels to NCCL: 1), all_reduce
# 64 KiB - 4 MiB, 100 iterations, alternated three times; Socket 1x1 and 2x2 twice.
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/out}; A=/tmp/run66; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run66.tgz -C /tmp run66; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the project
# commits no script that builds nccl-tests. ncclTests/README.md says how to build it.)
el "$(tail -1 $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build; P=dist
m(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir $P --ops all_reduce --iters 100 --warmup 10 --min 64K --max 4M --timeout 60 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
for i in 1 2 3; do
  b=$((40 + 40 * (i - 1)))
  m d$i $((b + 12)) --configs tcpxr-host
  m c1-$i $((b + 24)) --configs tcpxr-host --env NCCL_MAX_NCHANNELS=1
  [ $i -lt 3 ] && m s$i $((b + 40)) --configs socket-1x1,socket-2x2
done
