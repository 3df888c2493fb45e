#!/bin/bash
# run124 on one GPU (nvidia-h200, 16 cores): 46d04cb's library with its 8 channels against 16
# (NCCL_MIN_NCHANNELS=16 set by the runner; a user bound, so the tuner leaves channels alone, which
# changes nothing from 64 MiB up): all_reduce and all_gather 64 MiB - 1 GiB, 10 iterations,
# alternated three times.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run124.sh)
R=${OUT:-/tmp/out}; A=/tmp/run124; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
fin(){ tar czf $R/run124.tgz -C /tmp run124; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
NT=ncclTests/nccl-tests/build
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
el "$(cat $A/nccl-tests-build.txt)"
r(){ out=$1; shift; timeout 90 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --configs tcpxr-host --ops all_reduce,all_gather --iters 10 --warmup 3 --min 64M --max 1G --timeout 60 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
for i in 1 2 3; do
  r c8_$i
  r c16_$i --env NCCL_MIN_NCHANNELS=16
done
grep -h "Channel 1[0-9]/16 : 0 1\|Channel 07/08 : 0 1" $A/c8_1/logs/* $A/c16_1/logs/* | sed 's/^[^]]*\] //' | sort | uniq -c | tee -a $A/steps.txt
