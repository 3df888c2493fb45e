#!/bin/bash
# run112 on one GPU (nvidia-h200, 16 cores): 241be22's build (00ab285's code). The tuner runs
# per-rank shares of 512 KiB - 2 MiB on 2 channels: at all_reduce 2 MiB, would 4 be faster?
# all_reduce 512 KiB - 8 MiB, 100 iterations, the default against NCCL_MIN_NCHANNELS=4 (the tuner
# then leaves the channel count to NCCL; TUNING logged), alternated three times.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run112.sh)
R=${OUT:-/tmp/out}; A=/tmp/run112; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run112.tgz -C /tmp run112; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
B=$!
wait $B; el "$(cat $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build
r(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --configs tcpxr-host --ops all_reduce --iters 100 --warmup 10 --min 512K --max 8M --timeout 60 --env NCCL_DEBUG_SUBSYS=TUNING --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
b=$(( $(date +%s)-T0 ))
for i in 1 2 3; do
  r d$i $((b + 12)); b=$((b + 12))
  r ch4-$i $((b + 12)) --env NCCL_MIN_NCHANNELS=4; b=$((b + 12))
done
for d in d1 ch4-1; do tar xJf $A/$d/logs.tar.xz -C $A/$d 2>/dev/null; grep -ho "AllReduce: [0-9]* Bytes -> Algo [A-Z]* proto [A-Z]* channel{Lo..Hi}={[0-9.]*}" $A/$d/logs/* 2>/dev/null | sort | uniq -c | sort -k3 -n | sed "s/^/$d /" | tee -a $A/steps.txt; done
