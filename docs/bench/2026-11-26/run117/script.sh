#!/bin/bash
# run117 on one GPU (nvidia-h200, 16 cores): 7a90fba plus the tuner's rule below bulk (uncommitted:
# any collective on the ring with a per-rank share under 32 MiB keeps the 4 channels NCCL chose
# before tcpxr had it build 8) against 301ed26 (dist/old): all_gather, reduce_scatter, all_reduce
# 16 KiB - 1 GiB (10 iterations), alternated twice. Then issue 14's table on this code, and GPU
# buffers through NCCL with one hardware queue and under MPS.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run117.sh)
R=${OUT:-/tmp/out}; A=/tmp/run117; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run117.tgz -C /tmp run117; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt dist/old/commit.txt; } > $A/machine.txt 2>&1
NT=ncclTests/nccl-tests/build
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
el "$(cat $A/nccl-tests-build.txt)"
r(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --configs tcpxr-host --timeout 60 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
coll="--ops all_gather,reduce_scatter,all_reduce --iters 10 --warmup 3 --min 16K --max 1G"
b=$(( $(date +%s)-T0 ))
for i in 1 2; do
  r cnew$i $((b + 50)) $coll --plugin-dir dist; b=$((b + 50))
  r cold$i $((b + 50)) $coll --plugin-dir dist/old; b=$((b + 50))
done
grep -h "tuner: communicator" $A/cnew1/logs/* | sed 's/^[^]]*\] //;s/0x[0-9a-f]*/ID/' | sort | uniq -c | tee -a $A/steps.txt
timeout 260 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --iters 20 --warmup 5 --min 8 --max 1G --timeout 200 --out $A/table --configs socket,socket-1x1,socket-2x2,socket-4x4,tcpxr-host > $A/table.log 2>&1; el "table rc=$?"
b=$(( $(date +%s)-T0 ))
timeout $(left $((b + 30))) python3 ncclTests/run_nccl_tests.py --one-gpu --nccl-tests $NT --plugin-dir dist --iters 5 --warmup 2 --max 8M --timeout 30 --out $A/onequeue --configs tcpxr-gpu --env CUDA_DEVICE_MAX_CONNECTIONS=1 > $A/onequeue.log 2>&1; el "onequeue rc=$?"; b=$((b + 30))
timeout $(left $((b + 30))) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --iters 5 --warmup 2 --max 8M --timeout 30 --out $A/gpu-mps --configs tcpxr-gpu > $A/gpu-mps.log 2>&1; el "gpu-mps rc=$?"
