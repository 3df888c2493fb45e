#!/bin/bash
# GPU run T on one GPU (nvidia-h200, 16 cores), two ranks as two NCCL hosts under MPS: does the
# inline-when-idle limit at 128 KiB slow all_reduce at 1 MiB (run 53: 402 against 289-301 us)?
# Default (64 KiB) and 128 KiB alternating three times, all_reduce and sendrecv 64 KiB - 4 MiB with
# 100 iterations; Socket 1x1 beside.
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/out}; A=/tmp/runT; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/runT.tgz -C /tmp runT; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | head -40; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the project
# commits no script that builds nccl-tests. ncclTests/README.md says how to build it.)
el "$(tail -1 $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build; P=dist
run(){ out=$1; shift; timeout $(left $1) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir $P --iters 100 --warmup 10 --min 64K --max 4M --timeout 60 --out $A/$out "${@:2}" > $A/$out.log 2>&1; el "$out rc=$?"; }
run s1 60 --configs socket-1x1
for i in 1 2 3; do
  run d$i $((60 + 40 * i)) --configs tcpxr-host
  run i$i $((80 + 40 * i)) --configs tcpxr-host --env NCCL_TCPXR_INLINE_IDLE_BYTES=131072
done
