#!/bin/bash
# run130 on one GPU (nvidia-h200, 16 cores): the bulk's ceiling on one instance. (1) Loopback TCP
# alone (dist/zc/zc.c, 512 KiB messages, 8 in flight, acknowledged): 6 sender/receiver pairs beside
# 4 spinning threads (two ranks' 12 I/O threads and NCCL's 4 polling threads), and alone; 8 pairs
# alone; copy and vmsplice+splice. (2) tcpxr-bench nccl (no GPU, no NCCL): 4 and 8 connections of
# 512 KiB messages, 8 in flight each, at the default pool and at 12 threads. (3) NCCL sendrecv and
# all_reduce of 1 GiB through tcpxr (host buffers, MPS, 40 iterations), every thread's CPU sampled;
# alternated twice.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run130.sh;
# dist/zc/ held zc.c and cpu_sample.py, kept in docs/bench/2026-11-26/run127/zc/)
R=${OUT:-/tmp/out}; A=/tmp/run130; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
fin(){ tar czf $R/run130.tgz -C /tmp run130; cat $A/steps.txt; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt; } > $A/machine.txt 2>&1
NT=ncclTests/nccl-tests/build
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
el "$(cat $A/nccl-tests-build.txt)"
gcc -O2 -DUSE_CUDA -I/usr/local/cuda/include dist/zc/zc.c -o $A/zc -L/usr/local/cuda/lib64 -lcudart -lcuda -pthread > $A/zc-build.txt 2>&1
for i in 1 2; do for mode in 0 1; do SPIN=4 $A/zc 6 $mode 512 0; $A/zc 6 $mode 512 0; $A/zc 8 $mode 512 0; done; done > $A/zc.txt 2>&1
cat $A/zc.txt | tee -a $A/steps.txt
for i in 1 2; do for c in 4 8; do dist/tcpxr-bench nccl --comms $c --sizes 512K --inflight 8 --seconds 2; NCCL_TCPXR_IO_THREADS=12 dist/tcpxr-bench nccl --comms $c --sizes 512K --inflight 8 --seconds 2; done; done > $A/bench-nccl.txt 2>&1
grep -E "connections|KiB" $A/bench-nccl.txt | tee -a $A/steps.txt
b(){ out=$1; op=$2; shift 2; python3 dist/zc/cpu_sample.py '_perf|mps-server' -- timeout 120 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --configs tcpxr-host --ops $op --iters 40 --warmup 5 --min 1G --max 1G --timeout 100 --out $A/$out "$@" > $A/$out.log 2>&1
  el "$out rc=$? $(awk -F, 'NR>1{print $0}' $A/$out/summary.csv 2>/dev/null | tr '\n' ' ')"; grep -A30 '^host:' $A/$out.log | tee -a $A/steps.txt; }
for i in 1 2; do b sr$i sendrecv; b ar$i all_reduce; done
