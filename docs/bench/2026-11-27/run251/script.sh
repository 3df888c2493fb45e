#!/bin/bash
# run251 (one H200, 16 cores; 2026-11-27, twenty-eighth session): run 250 had four ranks on one
# GPU (2 I/O threads a rank) move bulk all_reduce 1.2-1.5x faster on 2 channels
# (NCCL_MAX_NCHANNELS=2) than on the 8 tcpxr has NCCL build. Again over the whole band at 4 ranks
# with Socket default and 1x1 beside it, and at 2 ranks (6 I/O threads a rank) with 2 and 4
# channels, to see where a rule would stop. dist/c13 (51a4acd). all_reduce, 10 iterations, -c 1,
# --repeat 2; 4 ranks 1-256 MiB, 2 ranks 16-512 MiB.
cd "$(dirname "$0")/.."; A=/tmp/run251; source dist/common.sh
{ date -u; uname -r; nvidia-smi -L; nproc; echo "c13: $(cat dist/c13/commit.txt)"; uptime; } > $A/machine.txt 2>&1
trap "tar cJf $R/run251.tar.xz -C /tmp run251" EXIT
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
timeout 330 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --one-gpu --mps --ranks 4 --ops all_reduce --warmup 3 --timeout 90 --plugin-dir dist/c13 --min 1M --max 256M --iters 10 --repeat 2 \
  --configs socket,socket-1x1,tcpxr-host,tcpxr-host+ch2 --variant ch2:NCCL_MAX_NCHANNELS=2 --out $A/r4 > $A/r4.txt 2>&1
el "r4 rc=$? $(grep -c ' ok, ' $A/r4.txt) ok"
timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --one-gpu --mps --ranks 2 --ops all_reduce --warmup 3 --timeout 90 --plugin-dir dist/c13 --min 16M --max 512M --iters 10 --repeat 2 \
  --configs tcpxr-host,tcpxr-host+ch2,tcpxr-host+ch4 --variant ch2:NCCL_MAX_NCHANNELS=2 --variant ch4:NCCL_MAX_NCHANNELS=4 --out $A/r2 > $A/r2.txt 2>&1
el "r2 rc=$? $(grep -c ' ok, ' $A/r2.txt) ok"
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
