#!/bin/bash
# GPU run O on one GPU (nvidia-h200): issue 13's hazard driven by NCCL itself. A shim library
# exporting only tcpxr's v6 table (ncclTests/hazard/v6_shim.c) makes NCCL 2.28.3 take v6, which
# has no device unpack: with NCCL_TCPXR_GPU_BUFFERS=1 tcpxr's own unpack kernel places received GPU
# pages. Two ranks as two NCCL hosts, all_reduce 8 B - 8 MiB: v6 host buffers (the shim works), v6
# GPU buffers under MPS and with one hardware queue (expected to hang: runner timeout), and the v7+
# path (device unpack) under MPS beside them.
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/out}; A=/tmp/runO; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export TCPXR_SHIM_TARGET=$PWD/dist/libnccl-net-tcpxr.so
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/runO.tgz -C /tmp runO; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem|timed out|hang" $A/*.log | head -40; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the project
# commits no script that builds nccl-tests. ncclTests/README.md says how to build it.)
el "$(tail -1 $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build; P=dist; V6=$PWD/dist/hazard/libnccl-net-tcpxr-v6.so
run(){ out=$1; shift; CUDA_VISIBLE_DEVICES=0 timeout $(left $1) python3 ncclTests/run_nccl_tests.py --one-gpu --nccl-tests $NT --plugin-dir $P --iters 3 --warmup 1 --ops all_reduce --max 8M --out $A/$out "${@:2}" > $A/$out.log 2>&1; el "$out rc=$?"; }
run v6-host-mps 80 --mps --timeout 40 --configs tcpxr-host --env NCCL_NET_PLUGIN=$V6
run v6-gpu-mps 140 --mps --timeout 40 --configs tcpxr-gpu --env NCCL_NET_PLUGIN=$V6
run v6-gpu-1queue 200 --timeout 40 --configs tcpxr-gpu --env NCCL_NET_PLUGIN=$V6 --env CUDA_DEVICE_MAX_CONNECTIONS=1
run v12-gpu-mps 240 --mps --timeout 40 --configs tcpxr-gpu
run v12-gpu-1queue 280 --timeout 40 --configs tcpxr-gpu --env CUDA_DEVICE_MAX_CONNECTIONS=1
for d in v6-host-mps v6-gpu-mps v6-gpu-1queue v12-gpu-mps v12-gpu-1queue; do
  { echo "== $d"; grep -h "Loaded net plugin\|Using network\|GPU buffers\|unpack\|WARN" $A/$d/logs/* 2>/dev/null | sed 's/^[^ ]* //' | sort | uniq -c | head -12; } >> $A/nccl-lines.txt
done
