#!/bin/bash
# GPU run K on one GPU (nvidia-h200, 16 cores): the tuner tcpxr exports (issue 14's mid band).
# Two ranks as two NCCL hosts under MPS: every configuration 8 B - 1 GiB; tcpxr-host with the tuner
# off beside it (the before); NCCL's choices per size (TUNING); GPU buffers with one hardware queue
# (no MPS: correctness only); torch under MPS.
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/out}; A=/tmp/runK; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/runK.tgz -C /tmp runK; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem|exact|mismatch" $A/*.log | head -40; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the project
# commits no script that builds nccl-tests. ncclTests/README.md says how to build it.)
el "$(tail -1 $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build; P=dist
run(){ out=$1; shift; CUDA_VISIBLE_DEVICES=0 timeout $(left $1) python3 ncclTests/run_nccl_tests.py --one-gpu --nccl-tests $NT --plugin-dir $P --iters 5 --warmup 2 --timeout 100 --out $A/$out "${@:2}" > $A/$out.log 2>&1; el "$out rc=$?"; }
run onegpu-mps 170 --mps --max 1G
run tuner-off 200 --mps --configs tcpxr-host --max 16M --env NCCL_TCPXR_TUNER=0
run tuning-log 225 --mps --configs tcpxr-host --ops all_reduce --max 64M --env NCCL_DEBUG_SUBSYS=TUNING
run onequeue 300 --configs tcpxr-host,tcpxr-gpu --max 64M --env CUDA_DEVICE_MAX_CONNECTIONS=1
CUDA_VISIBLE_DEVICES=0 timeout $(left 340) python3 ncclTests/torch_bench.py --one-gpu --mps --plugin-dir $P --configs tcpxr-host,tcpxr-gpu --max 64M --iters 5 --warmup 2 --out $A/torch > $A/torch.log 2>&1; el "torch rc=$?"
grep -h "TUNER/Plugin\|tcpxr::tuner\|tuner:" $A/tuning-log/logs/* 2>/dev/null | sort | uniq -c | head > $A/tuner-lines.txt
grep -h "AllReduce: .* Bytes -> " $A/tuning-log/logs/* 2>/dev/null | sed 's/.*AllReduce/AllReduce/' | sort -u -t' ' -k2,2n > $A/tuning-choices.txt
