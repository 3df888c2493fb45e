#!/bin/bash
# GPU run S on one GPU (nvidia-h200): the final commit's GPU-buffer check (DESIGN.md): tcpxr-gpu
# (device unpack) all_reduce and sendrecv 8 B - 64 MiB with CUDA_DEVICE_MAX_CONNECTIONS=1 (no MPS:
# correctness only) and under MPS beside tcpxr-host; torch with GPU buffers under MPS.
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/out}; A=/tmp/runS; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/runS.tgz -C /tmp runS; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | head -40; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the project
# commits no script that builds nccl-tests. ncclTests/README.md says how to build it.)
el "$(tail -1 $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build; P=dist
run(){ out=$1; shift; timeout $(left $1) python3 ncclTests/run_nccl_tests.py --one-gpu --nccl-tests $NT --plugin-dir $P --iters 5 --warmup 2 --timeout 60 --max 64M --out $A/$out "${@:2}" > $A/$out.log 2>&1; el "$out rc=$?"; }
run onequeue 110 --configs tcpxr-gpu --env CUDA_DEVICE_MAX_CONNECTIONS=1
run mps 160 --mps --configs tcpxr-host,tcpxr-gpu
timeout $(left 200) python3 ncclTests/torch_bench.py --one-gpu --mps --plugin-dir $P --configs tcpxr-gpu --max 64M --iters 5 --warmup 2 --out $A/torch > $A/torch.log 2>&1; el "torch rc=$?"
