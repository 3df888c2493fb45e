#!/bin/bash
# run197 (a 2-GPU host; 2026-11-27, twenty-second session): issue 31 items 1-2 at 2 ranks, one per GPU,
# with medians: the four collectives 8 B-32 MiB against all four Socket tunings, three alternations
# (the order of the configs rotated each time), 20 iterations, -c 1, on 8c46bbd (dist/head).
# Runs 187 and 194 were one run each, and Socket's tunings alone spread up to 2.5x between
# neighbouring sizes (all_gather 2 MiB: 4x4 167 us, 2x2 262), so "best of four" picks the luckiest.
cd "$(dirname "$0")/.."; A=/tmp/run197; source dist/common.sh
export CUDA_VISIBLE_DEVICES=0,1; trap "tar cJf $R/run197.tar.xz -C /tmp run197" EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/head/commit.txt; uptime; lscpu | grep -E '^(Model name|Thread|Core|Socket|NUMA node\(s\)|Hypervisor)'; } > $A/machine.txt 2>&1
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 32
orders=(socket,socket-1x1,socket-2x2,socket-4x4,tcpxr-host tcpxr-host,socket-4x4,socket-2x2,socket-1x1,socket socket-2x2,tcpxr-host,socket,socket-4x4,socket-1x1)
for i in 1 2 3; do
  timeout 170 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/head --mpirun --ranks 2 --ops all_reduce,all_gather,reduce_scatter,sendrecv --max 32M --iters 20 --warmup 5 --timeout 40 --configs ${orders[$((i-1))]} --out $A/r$i > $A/r$i.txt 2>&1
  el "r$i rc=$? $(grep -c ' ok, ' $A/r$i.txt) ok, $(grep -c FAILED $A/r$i.txt) failed"
done
python3 dist/medtab.py $A/r1 $A/r2 $A/r3 > $A/medians.txt 2>&1; el "medians rc=$?"
el done
