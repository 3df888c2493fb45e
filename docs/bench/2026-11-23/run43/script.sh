#!/bin/bash
# GPU run I on one GPU (nvidia-h200, 16 cores), two ranks as two NCCL hosts under MPS (issue 14's
# setting): which protocol and channel count NCCL should use for tcpxr-host all_reduce from 32 KiB
# to 16 MiB. NCCL picks LL on 4 channels up to 1 MiB for tcpxr's 400 Gb/s; this measures Simple on
# 4, 2 and 1 channels and LL on 2 beside Socket's tunings, to set a tuner's policy from numbers.
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/out}; A=/tmp/runI; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/runI.tgz -C /tmp runI; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | head -40; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the project
# commits no script that builds nccl-tests. ncclTests/README.md says how to build it.)
el "$(tail -1 $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build; P=dist
run(){ out=$1; shift; CUDA_VISIBLE_DEVICES=0 timeout $(left $1) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir $P --iters 10 --warmup 3 --timeout 60 --ops all_reduce --min 8 --max 16M --out $A/$out "${@:2}" > $A/$out.log 2>&1; el "$out rc=$?"; }
run ref 150 --configs socket,socket-1x1,socket-2x2,socket-4x4,tcpxr-host
run simple4 190 --configs tcpxr-host --env NCCL_PROTO=Simple
run simple2 230 --configs tcpxr-host --env NCCL_PROTO=Simple --env NCCL_MAX_NCHANNELS=2
run simple1 270 --configs tcpxr-host --env NCCL_PROTO=Simple --env NCCL_MAX_NCHANNELS=1
run ll2 310 --configs tcpxr-host --env NCCL_PROTO=LL --env NCCL_MAX_NCHANNELS=2
run ref2 400 --configs socket-1x1,socket-2x2,tcpxr-host
