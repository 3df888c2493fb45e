#!/bin/bash
# run211 (a 2-GPU host, 32 cores; 2026-11-27, twenty-third session): run 210 again without its
# confound. There NCCL_TCPXR_IO_THREADS=12 also cut the auto spinners from 4 to 1 (12 threads, NCCL's
# 2 and 4 spinners need 18 of the process's 16 cores), and the band was 3-17 % slower. Here tcpxr
# (e4db58c, dist/new) at its defaults (8 threads, 4 spinners), with 12 threads and 4 spinners
# set, and with 10 threads (auto keeps 4 spinners: 10 + 2 + 4 = 16); all_reduce and all_gather
# 256 KiB-512 MiB, 20 iterations, A B C C B A.
cd "$(dirname "$0")/.."; A=/tmp/run211; source dist/common.sh
export CUDA_VISIBLE_DEVICES=0,1; trap "tar cJf $R/run211.tar.xz -C /tmp run211" EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/new/commit.txt; uptime; } > $A/machine.txt 2>&1
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 32
r(){ local out=$1; shift
  timeout 120 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/new --mpirun --ranks 2 --ops all_reduce,all_gather --configs tcpxr-host --min 256K --max 512M --iters 20 --warmup 5 --timeout 60 --out $A/$out "$@" > $A/$out.txt 2>&1
  el "$out rc=$? $(grep -c ' ok, ' $A/$out.txt) ok, $(grep -c FAILED $A/$out.txt) failed"; }
r a1; r b1 --env NCCL_TCPXR_IO_THREADS=12 --env NCCL_TCPXR_IO_SPIN_THREADS=4; r c1 --env NCCL_TCPXR_IO_THREADS=10; r c2 --env NCCL_TCPXR_IO_THREADS=10; r b2 --env NCCL_TCPXR_IO_THREADS=12 --env NCCL_TCPXR_IO_SPIN_THREADS=4; r a2
el done
