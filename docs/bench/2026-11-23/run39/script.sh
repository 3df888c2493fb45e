#!/bin/bash
# GPU run E on nvidia-h200-x2 (two GPUs, one rank each): is the inline-when-idle path (512 KiB
# messages on the control socket, copied by NCCL's proxy thread) what holds all_reduce at 3 GB/s
# from 512 KiB to 8 MiB? Speed 200 Gb/s (4 channels, LL handed over earlier)? sendrecv with the
# 512 KiB p2p chunk.
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/out}; A=/tmp/runE; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/runE.tgz -C /tmp runE; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | head -40; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the project
# commits no script that builds nccl-tests. ncclTests/README.md says how to build it.)
el "$(tail -1 $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build; P=dist
run(){ out=$1; shift; timeout $(left $1) python3 ncclTests/run_nccl_tests.py --mpirun --nccl-tests $NT --plugin-dir $P --iters 5 --warmup 2 --timeout 60 --out $A/$out "${@:2}" > $A/$out.log 2>&1; el "$out rc=$?"; }
run ar-ref 100 --configs socket-2x2,tcpxr-host --ops all_reduce --max 1G
run ar-idle0 130 --configs tcpxr-host --ops all_reduce --max 1G --env NCCL_TCPXR_INLINE_IDLE_BYTES=0
run ar-idle64k 160 --configs tcpxr-host --ops all_reduce --max 1G --env NCCL_TCPXR_INLINE_IDLE_BYTES=65536
run ar-idle0-200g 190 --configs tcpxr-host --ops all_reduce --max 1G --env NCCL_TCPXR_INLINE_IDLE_BYTES=0 --env NCCL_TCPXR_SPEED_MBPS=200000
run ar-idle0-simple 220 --configs tcpxr-host --ops all_reduce --max 64M --env NCCL_TCPXR_INLINE_IDLE_BYTES=0 --env NCCL_PROTO=Simple
run ar-idle0-inline0 250 --configs tcpxr-host --ops all_reduce --max 64M --env NCCL_TCPXR_INLINE_IDLE_BYTES=0 --env NCCL_TCPXR_INLINE_BYTES=0
run sr-chunk512k 290 --configs socket-1x1,socket-2x2,tcpxr-host --ops sendrecv --max 1G --env NCCL_P2P_NET_CHUNKSIZE=524288
run sr-chunk512k-idle0 320 --configs tcpxr-host --ops sendrecv --max 1G --env NCCL_P2P_NET_CHUNKSIZE=524288 --env NCCL_TCPXR_INLINE_IDLE_BYTES=0
run ar-idle0-io16 350 --configs tcpxr-host --ops all_reduce --min 256K --max 1G --env NCCL_TCPXR_INLINE_IDLE_BYTES=0 --env NCCL_TCPXR_IO_THREADS=16
