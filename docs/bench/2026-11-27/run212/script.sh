#!/bin/bash
# run212 (a 2-GPU host, 32 cores; 2026-11-27, twenty-third session): the 10-thread pool (run 211)
# with GPU buffers: tcpxr (e4db58c, dist/new) at its defaults (8 threads) and with
# NCCL_TCPXR_IO_THREADS=10, config tcpxr-gpu (device unpack), all_reduce and sendrecv 8-512 MiB,
# 2 ranks one per GPU, 20 iterations, A B B A.
cd "$(dirname "$0")/.."; A=/tmp/run212; source dist/common.sh
export CUDA_VISIBLE_DEVICES=0,1; trap "tar cJf $R/run212.tar.xz -C /tmp run212" EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/new/commit.txt; uptime; } > $A/machine.txt 2>&1
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 32
r(){ local out=$1; shift
  timeout 120 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/new --mpirun --ranks 2 --ops all_reduce,sendrecv --configs tcpxr-gpu --min 8M --max 512M --iters 20 --warmup 5 --timeout 60 --out $A/$out "$@" > $A/$out.txt 2>&1
  el "$out rc=$? $(grep -c ' ok, ' $A/$out.txt) ok, $(grep -c FAILED $A/$out.txt) failed"; }
r a1; r b1 --env NCCL_TCPXR_IO_THREADS=10; r b2 --env NCCL_TCPXR_IO_THREADS=10; r a2
el done
