#!/bin/bash
# run235 (one H200, 16 cores; 2026-11-27): why GPU buffers' all_reduce of 4-64 MiB was slower with
# copies than with records in run234: the copies' counters (NCCL_TCPXR_STATS=1: queuing time and
# time from queued to seen done). 2 ranks under MPS, all_reduce and sendrecv 4-512 MiB, 10
# iterations, tcpxr-gpu with copies and with records only. dist/c2: f243038 plus the copy counters.
cd "$(dirname "$0")/.."; A=/tmp/run235; source dist/common.sh
L=dist/c2
{ date -u; uname -r; nvidia-smi -L; nproc; echo "new: $(cat $L/commit.txt)"; uptime; } > $A/machine.txt 2>&1
trap "tar cJf $R/run235.tar.xz -C /tmp run235" EXIT
[ -x /tmp/nt-2.28.3/build/sendrecv_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 14
NT=/tmp/nt-2.28.3/build
timeout 300 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir $L --one-gpu --mps --ops all_reduce,sendrecv --min 4M --max 512M --iters 10 --warmup 3 --timeout 100 --configs tcpxr-gpu,tcpxr-gpu+rec --variant rec:NCCL_TCPXR_GPU_COPY_BYTES=0 --out $A/speed > $A/speed.txt 2>&1
el "speed rc=$? $(grep -c ' ok, ' $A/speed.txt) ok"
el done
