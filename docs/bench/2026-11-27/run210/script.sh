#!/bin/bash
# run210 (a 2-GPU host, 32 cores; 2026-11-27, twenty-third session): the pool's size at 2 ranks,
# one per GPU. Runs 206 and 209: tcpxr's ring moves what its 8 I/O threads a rank copy (12 threads:
# 48-50 GB/s against 35), and NCCL's bulk all_reduce (16.5 GB/s busbw) equals that ring's rate a
# rank. Auto gives 8 (the cap) where 14 would fit beside NCCL's 2. tcpxr (e4db58c, dist/new) at
# its defaults and with NCCL_TCPXR_IO_THREADS=12 (4 spinners either way), all_reduce and
# all_gather 256 KiB-512 MiB, 20 iterations, alternated twice (A B B A).
cd "$(dirname "$0")/.."; A=/tmp/run210; source dist/common.sh
export CUDA_VISIBLE_DEVICES=0,1; trap "tar cJf $R/run210.tar.xz -C /tmp run210" EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/new/commit.txt; uptime; } > $A/machine.txt 2>&1
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 32
r(){ local out=$1; shift
  timeout 120 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/new --mpirun --ranks 2 --ops all_reduce,all_gather --configs tcpxr-host --min 256K --max 512M --iters 20 --warmup 5 --timeout 60 --out $A/$out "$@" > $A/$out.txt 2>&1
  el "$out rc=$? $(grep -c ' ok, ' $A/$out.txt) ok, $(grep -c FAILED $A/$out.txt) failed"; }
r a1; r b1 --env NCCL_TCPXR_IO_THREADS=12; r b2 --env NCCL_TCPXR_IO_THREADS=12; r a2
el done
