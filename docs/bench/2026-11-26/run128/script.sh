#!/bin/bash
# run128 on one GPU (nvidia-h200, 16 cores): the ceilings under issue 14's targets. (1) Loopback
# TCP alone (dist/zc/zc.c) with 6 sender/receiver pairs (two ranks' 12 I/O threads) beside 4
# spinning threads (NCCL's proxy and main threads of two ranks), copy and vmsplice+splice.
# (2) tcpxr-bench latency, 8 B and 64 KiB, with plain TCP in the same process. (3) NCCL's
# choices and times for small and band all_reduce and sendrecv (NCCL_DEBUG_SUBSYS=TUNING):
# Socket default, 1x1, 2x2 and tcpxr, 200 iterations 8 B - 4 KiB, 100 iterations 128 KiB - 2 MiB.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run128.sh;
# dist/zc/ held zc.c and cpu_sample.py, kept in docs/bench/2026-11-26/run127/zc/)
R=${OUT:-/tmp/out}; A=/tmp/run128; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
fin(){ tar czf $R/run128.tgz -C /tmp run128; cat $A/steps.txt; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt; } > $A/machine.txt 2>&1
NT=ncclTests/nccl-tests/build
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
B=$!
gcc -O2 -DUSE_CUDA -I/usr/local/cuda/include dist/zc/zc.c -o $A/zc -L/usr/local/cuda/lib64 -lcudart -lcuda -pthread > $A/zc-build.txt 2>&1
for i in 1 2; do for mode in 0 1; do SPIN=4 $A/zc 6 $mode 512 0; done; $A/zc 6 0 512 0; done > $A/zc.txt 2>&1
wait $B; el "$(cat $A/nccl-tests-build.txt)"; cat $A/zc.txt | tee -a $A/steps.txt
for i in 1 2; do for s in 8 65536; do dist/tcpxr-bench latency --size $s --iters 20000; done; done > $A/latency.txt 2>&1
grep -i -E "one-way|median|plain" $A/latency.txt | tee -a $A/steps.txt
n(){ out=$1; shift; timeout 200 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --configs socket,socket-1x1,socket-2x2,tcpxr-host --out $A/$out --timeout 60 --env NCCL_DEBUG_SUBSYS=TUNING "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
n small --iters 200 --warmup 20 --min 8 --max 4K
n band --iters 100 --warmup 10 --min 128K --max 2M
n small2 --iters 200 --warmup 20 --min 8 --max 4K
