#!/bin/bash
# run114 on one GPU (nvidia-h200, 16 cores): tcpxr giving NCCL 8 channels (NCCL_MIN_NCHANNELS=8 set
# by the plugin when unset, its tuner still choosing 1-2 in the band; uncommitted on 301ed26) and
# NCCL_BUFFSIZE=8 MiB, against 301ed26's code (dist/old). 8 B - 1 GiB once per config
# (20 iterations), then bulk 16 MiB - 1 GiB twice more (10 iterations), alternated.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run114.sh)
R=${OUT:-/tmp/out}; A=/tmp/run114; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run114.tgz -C /tmp run114; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt dist/old/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
B=$!
wait $B; el "$(cat $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build
r(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --configs tcpxr-host --timeout 120 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
full="--iters 20 --warmup 5 --min 8 --max 1G"; bulk="--iters 10 --warmup 3 --min 16M --max 1G"
BUF="--env NCCL_BUFFSIZE=8388608"
b=$(( $(date +%s)-T0 ))
r fold $((b + 60)) $full --plugin-dir dist/old; b=$((b + 60))
r fch8 $((b + 60)) $full --plugin-dir dist; b=$((b + 60))
r fbuf $((b + 60)) $full --plugin-dir dist/old $BUF; b=$((b + 60))
r fboth $((b + 60)) $full --plugin-dir dist $BUF; b=$((b + 60))
grep -h "MIN_NCHANNELS\|BUFFSIZE\|Channel 0[0-9]/\|nChannels\|I/O pool" $A/fch8/logs/* $A/fboth/logs/* | sed 's/^[^]]*\] //' | sort | uniq -c | head -20 | tee -a $A/steps.txt
for i in 1 2; do
  for c in old ch8 buf both; do
    case $c in old) a="--plugin-dir dist/old";; ch8) a="--plugin-dir dist";; buf) a="--plugin-dir dist/old $BUF";; both) a="--plugin-dir dist $BUF";; esac
    r b$c$i $((b + 25)) $bulk $a; b=$((b + 25))
  done
done
