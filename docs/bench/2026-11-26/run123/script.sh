#!/bin/bash
# run123 on one GPU (nvidia-h200, 16 cores): 478992d. Which NCCL settings tcpxr gives over each
# transport: socket (host and GPU buffers) and tcpx (tcpxr's TCPX emulator), all_reduce and
# all_gather 8 B - 64 MiB, 3 iterations, under MPS; NCCL's channel lines and tcpxr's init lines.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run123.sh)
R=${OUT:-/tmp/out}; A=/tmp/run123; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
fin(){ tar czf $R/run123.tgz -C /tmp run123; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
NT=ncclTests/nccl-tests/build
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
el "$(cat $A/nccl-tests-build.txt)"
export TCPX_EMU_MODE=gpu NCCL_TCPXR_TCPX_LIB=$PWD/dist/libtcpx_emu.so
timeout 250 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --ops all_reduce,all_gather --iters 3 --warmup 1 --max 64M --timeout 60 --out $A/t --configs tcpxr-host,tcpxr-gpu,tcpxr-tcpx > $A/t.log 2>&1; el "t rc=$?"
for c in tcpxr-host tcpxr-gpu tcpxr-tcpx; do echo "== $c"; grep -h "unset: set to\|Channel 0[0-9]/[0-9]* : 0 1\|tuner: communicator" $A/t/logs/*$c* | sed 's/^[^]]*\] //;s/0x[0-9a-f]*/ID/' | cut -c1-110 | sort | uniq -c; done | tee -a $A/steps.txt
