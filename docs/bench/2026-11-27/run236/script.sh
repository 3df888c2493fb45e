#!/bin/bash
# run236 (one H200, 16 cores; 2026-11-27): run235 again with each receive comm's copies on a stream of
# its own (dist/c3: f243038, the copy counters, a copy stream per comm), host buffers beside;
# 2 ranks under MPS, all_reduce and sendrecv 1-512 MiB, 10 iterations.
cd "$(dirname "$0")/.."; A=/tmp/run236; source dist/common.sh
L=dist/c3
{ date -u; uname -r; nvidia-smi -L; nproc; echo "new: $(cat $L/commit.txt)"; uptime; } > $A/machine.txt 2>&1
trap "tar cJf $R/run236.tar.xz -C /tmp run236" EXIT
[ -x /tmp/nt-2.28.3/build/sendrecv_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 14
NT=/tmp/nt-2.28.3/build
timeout 300 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir $L --one-gpu --mps --ops all_reduce,sendrecv --min 1M --max 512M --iters 10 --warmup 3 --timeout 100 --configs tcpxr-host,tcpxr-gpu,tcpxr-gpu+rec --variant rec:NCCL_TCPXR_GPU_COPY_BYTES=0 --out $A/speed > $A/speed.txt 2>&1
el "speed rc=$? $(grep -c ' ok, ' $A/speed.txt) ok"
el done
