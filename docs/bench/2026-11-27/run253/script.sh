#!/bin/bash
# run253 (one H200, 16 cores; prepared 2026-11-27 in the twenty-eighth session, not yet run): three
# ranks on one GPU under MPS, whose auto pools have 3 I/O threads (16 cores / 3 ranks, less NCCL's
# 2). The tuner's pool cap (src/tuner.rs POOL_CHANNELS) covers 2 threads only; would 3 gain from 2
# channels too? dist/c17 (main 56e8f4b) at its defaults (8 channels for bulk) against NCCL_MAX_NCHANNELS=2,
# alternated twice by --repeat 2: all_reduce and all_gather 4-256 MiB, host buffers, 10
# iterations, -c 1.
cd "$(dirname "$0")/.."; A=/tmp/run253; source dist/common.sh
{ date -u; uname -r; nvidia-smi -L; nproc; echo "c17: $(cat dist/c17/commit.txt)"; uptime; } > $A/machine.txt 2>&1
trap "tar cJf $R/run253.tar.xz -C /tmp run253" EXIT
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
timeout 330 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --one-gpu --mps --ranks 3 --ops all_reduce,all_gather --warmup 3 --timeout 90 --plugin-dir dist/c17 --min 4M --max 256M --iters 10 --repeat 2 \
  --configs tcpxr-host,tcpxr-host+ch2 --variant ch2:NCCL_MAX_NCHANNELS=2 --out $A/r3 > $A/r3.txt 2>&1
el "r3 rc=$? $(grep -c ' ok, ' $A/r3.txt) ok"
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
