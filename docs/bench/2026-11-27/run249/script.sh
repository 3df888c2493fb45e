#!/bin/bash
# run249 (one H200, 16 cores; 2026-11-27, twenty-eighth session): four ranks on one GPU under MPS,
# where each rank's auto I/O pool is 2 threads and 1 spinner (16 cores / 4 ranks), and run 150 had
# bulk all_reduce at 0.86-1.01 of Socket's best. Do the spinners or the pool's size cost the
# shared cores? dist/c13 (51a4acd, the code at HEAD): defaults, NCCL_TCPXR_IO_SPIN_US=0 (no thread
# spins), NCCL_TCPXR_IO_THREADS=3; Socket default and 1x1 (run 150's best in bulk). all_reduce
# 1-256 MiB, 10 iterations, -c 1, --repeat 2.
cd "$(dirname "$0")/.."; A=/tmp/run249; source dist/common.sh
{ date -u; uname -r; nvidia-smi -L; nproc; echo "c13: $(cat dist/c13/commit.txt)"; uptime; } > $A/machine.txt 2>&1
trap "tar cJf $R/run249.tar.xz -C /tmp run249" EXIT
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
timeout 560 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --one-gpu --mps --ranks 4 --ops all_reduce --warmup 3 --timeout 90 --plugin-dir dist/c13 --min 1M --max 256M --iters 10 --repeat 2 \
  --configs socket,socket-1x1,tcpxr-host,tcpxr-host+nospin,tcpxr-host+t3 --variant nospin:NCCL_TCPXR_IO_SPIN_US=0 --variant t3:NCCL_TCPXR_IO_THREADS=3 --out $A/r4 > $A/r4.txt 2>&1
el "r4 rc=$? $(grep -c ' ok, ' $A/r4.txt) ok"
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
