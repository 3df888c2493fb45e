#!/bin/bash
# run250 (one H200, 16 cores; 2026-11-27, twenty-eighth session): run 249 left bulk all_reduce of
# four ranks on one GPU (MPS, 2 I/O threads a rank) at 0.82-0.86 of Socket 1x1 from 128 MiB,
# where tcpxr has NCCL build 8 channels of 4 stripes each. Fewer connections on those 2 threads?
# dist/c13 (51a4acd): defaults, NCCL_MAX_NCHANNELS=4 and =2 (tcpxr then leaves the channels to
# NCCL), NCCL_TCPXR_STRIPES=2 and =1; Socket 1x1. all_reduce 16-256 MiB, 10 iterations, -c 1, --repeat 2.
cd "$(dirname "$0")/.."; A=/tmp/run250; source dist/common.sh
{ date -u; uname -r; nvidia-smi -L; nproc; echo "c13: $(cat dist/c13/commit.txt)"; uptime; } > $A/machine.txt 2>&1
trap "tar cJf $R/run250.tar.xz -C /tmp run250" EXIT
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
timeout 560 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --one-gpu --mps --ranks 4 --ops all_reduce --warmup 3 --timeout 90 --plugin-dir dist/c13 --min 16M --max 256M --iters 10 --repeat 2 \
  --configs socket-1x1,tcpxr-host,tcpxr-host+ch4,tcpxr-host+ch2,tcpxr-host+s2,tcpxr-host+s1 --variant ch4:NCCL_MAX_NCHANNELS=4 --variant ch2:NCCL_MAX_NCHANNELS=2 --variant s2:NCCL_TCPXR_STRIPES=2 --variant s1:NCCL_TCPXR_STRIPES=1 --out $A/r4 > $A/r4.txt 2>&1
el "r4 rc=$? $(grep -c ' ok, ' $A/r4.txt) ok"
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
