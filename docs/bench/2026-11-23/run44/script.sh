#!/bin/bash
# GPU run J on one GPU (nvidia-h200, 16 cores), two ranks as two NCCL hosts under MPS: the
# mid band (32 KiB-16 MiB): does NCCL's proxy thread moving a chunk itself (hand-off threshold
# 128/512 KiB instead of auto = 0 on 16 cores: every chunk to the I/O pool) cut the per-message
# cost, with NCCL's protocol and channels as chosen and with Simple on 4 or 2 channels.
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/out}; A=/tmp/runJ; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/runJ.tgz -C /tmp runJ; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | head -40; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the project
# commits no script that builds nccl-tests. ncclTests/README.md says how to build it.)
el "$(tail -1 $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build; P=dist
run(){ out=$1; shift; CUDA_VISIBLE_DEVICES=0 timeout $(left $1) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir $P --iters 20 --warmup 3 --timeout 60 --min 8 --max 16M --out $A/$out "${@:2}" > $A/$out.log 2>&1; el "$out rc=$?"; }
run ref 110 --configs socket-1x1,socket-2x2,tcpxr-host
run h512 140 --configs tcpxr-host --env NCCL_TCPXR_HANDOFF_BYTES=524288
run h128 170 --configs tcpxr-host --env NCCL_TCPXR_HANDOFF_BYTES=131072
run h512-simple 200 --configs tcpxr-host --ops all_reduce --env NCCL_TCPXR_HANDOFF_BYTES=524288 --env NCCL_PROTO=Simple
run h512-simple2 230 --configs tcpxr-host --ops all_reduce --env NCCL_TCPXR_HANDOFF_BYTES=524288 --env NCCL_PROTO=Simple --env NCCL_MAX_NCHANNELS=2
run simple2 260 --configs tcpxr-host --ops all_reduce --env NCCL_PROTO=Simple --env NCCL_MAX_NCHANNELS=2
run idle512-simple 290 --configs tcpxr-host --ops all_reduce --env NCCL_TCPXR_INLINE_IDLE_BYTES=524288 --env NCCL_PROTO=Simple
run ref2 340 --configs socket-1x1,socket-2x2,tcpxr-host
