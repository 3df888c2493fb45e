#!/bin/bash
# run115 on one GPU (nvidia-h200, 16 cores): 8 NCCL channels set by tcpxr (as run114's ch8), with
# and without the tuner holding all_reduce shares of 2-32 MiB to 4 channels (TCPXR_EXP_CAP), against
# 301ed26's code (dist/old); 2 MiB - 1 GiB, 10 iterations, alternated four times.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run115.sh)
R=${OUT:-/tmp/out}; A=/tmp/run115; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run115.tgz -C /tmp run115; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt dist/old/commit.txt; } > $A/machine.txt 2>&1
NT=ncclTests/nccl-tests/build
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
r(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --configs tcpxr-host --timeout 120 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
bulk="--iters 10 --warmup 3 --min 2M --max 1G"
b=$(( $(date +%s)-T0 ))
for i in 1 2 3 4; do
  for c in old ch8 cap; do
    case $c in old) a="--plugin-dir dist/old";; ch8) a="--plugin-dir dist";; cap) a="--plugin-dir dist --env TCPXR_EXP_CAP=1";; esac
    r b$c$i $((b + 30)) $bulk $a; b=$((b + 30))
  done
done
