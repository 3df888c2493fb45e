#!/bin/bash
# run122 on one GPU (nvidia-h200, 16 cores): b05692a. Every nccl-tests collective over the tcpx
# transport driving tcpxr's TCPX emulator (GPU memory mode, device unpack), 8 B - 8 MiB,
# 3 iterations: under MPS and with CUDA_DEVICE_MAX_CONNECTIONS=1 without MPS.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run122.sh)
R=${OUT:-/tmp/out}; A=/tmp/run122; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
fin(){ tar czf $R/run122.tgz -C /tmp run122; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
NT=ncclTests/nccl-tests/build
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
el "$(cat $A/nccl-tests-build.txt)"
export TCPX_EMU_MODE=gpu NCCL_TCPXR_TCPX_LIB=$PWD/dist/libtcpx_emu.so
ops="--ops all_reduce,sendrecv,broadcast,reduce,all_gather,reduce_scatter,alltoall --iters 3 --warmup 1 --max 8M --timeout 60"
timeout 250 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist $ops --out $A/mps --configs tcpxr-tcpx > $A/mps.log 2>&1; el "mps rc=$?"
grep -h "PAT_ENABLE\|PROTO unset\|MIN_NCHANNELS\|transport tcpx" $A/mps/logs/* | sed 's/^[^]]*\] //' | cut -c1-160 | sort | uniq -c | tee -a $A/steps.txt
timeout 250 python3 ncclTests/run_nccl_tests.py --one-gpu --nccl-tests $NT --plugin-dir dist $ops --out $A/onequeue --configs tcpxr-tcpx --env CUDA_DEVICE_MAX_CONNECTIONS=1 > $A/onequeue.log 2>&1; el "onequeue rc=$?"
