#!/bin/bash
# GPU run Q on one GPU (nvidia-h200, 16 cores), two ranks as two NCCL hosts under MPS: the hand-off
# threshold with large chunks going to the I/O pool whole (commit of dist/commit.txt). auto (0 on
# 16 cores: every chunk to the pool) against 128 and 256 KiB (chunks up to that size moved by
# NCCL's thread), mid band with 40 iterations, bulk with 5; Socket 1x1 and 2x2 beside.
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/out}; A=/tmp/runQ; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/runQ.tgz -C /tmp runQ; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | head -40; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the project
# commits no script that builds nccl-tests. ncclTests/README.md says how to build it.)
el "$(tail -1 $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build; P=dist
run(){ out=$1; shift; CUDA_VISIBLE_DEVICES=0 timeout $(left $1) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir $P --timeout 100 --out $A/$out "${@:2}" > $A/$out.log 2>&1; el "$out rc=$?"; }
mid="--iters 40 --warmup 10 --min 16K --max 16M"
bulk="--iters 5 --warmup 2 --min 64M --max 1G"
run mid-ref 80 $mid --configs socket-1x1,socket-2x2,tcpxr-host
run mid-h128 110 $mid --configs tcpxr-host --env NCCL_TCPXR_HANDOFF_BYTES=131072
run mid-h256 140 $mid --configs tcpxr-host --env NCCL_TCPXR_HANDOFF_BYTES=262144
run mid-ref2 200 $mid --configs socket-1x1,socket-2x2,tcpxr-host
run bulk-ref 300 $bulk --configs socket-2x2,tcpxr-host
run bulk-h128 360 $bulk --configs tcpxr-host --env NCCL_TCPXR_HANDOFF_BYTES=131072
