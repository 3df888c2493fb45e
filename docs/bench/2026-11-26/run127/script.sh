#!/bin/bash
# run127 on one GPU (nvidia-h200, 16 cores): where the bulk's cores go. (1) Loopback TCP alone,
# dist/zc/zc.c: N sender/receiver thread pairs, 512 KiB messages, 8 in flight, an 8-byte
# acknowledgement per message; copy (send) against vmsplice+splice (the sender's pages by
# reference: one copy, the receiver's), malloc'd and cuMem host memory. (2) NCCL sendrecv and
# all_reduce of 1 GiB through tcpxr (host buffers, MPS), every thread's CPU sampled
# (dist/zc/cpu_sample.py): tcpxr's defaults, NCCL_NCHANNELS_PER_NET_PEER=4, NCCL_TCPXR_IO_THREADS=8.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run127.sh;
# dist/zc/ held zc.c and cpu_sample.py, kept in docs/bench/2026-11-26/run127/zc/)
# (run127 itself ran an earlier zc.c without the SPIN option, and a cpu_sample.py without the
# "cpu s" column; the code is otherwise the same.)
R=${OUT:-/tmp/out}; A=/tmp/run127; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
fin(){ tar czf $R/run127.tgz -C /tmp run127; cat $A/steps.txt; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt; } > $A/machine.txt 2>&1
NT=ncclTests/nccl-tests/build
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
B=$!
gcc -O2 -DUSE_CUDA -I/usr/local/cuda/include dist/zc/zc.c -o $A/zc -L/usr/local/cuda/lib64 -lcudart -lcuda -pthread > $A/zc-build.txt 2>&1
for mem in 0 2; do for s in 1 4 8; do for mode in 0 1 0 1; do $A/zc $s $mode 512 $mem; done; done; done > $A/zc.txt 2>&1
el "zc done"; cat $A/zc.txt
wait $B; el "$(cat $A/nccl-tests-build.txt)"
b(){ out=$1; op=$2; shift 2; python3 dist/zc/cpu_sample.py '_perf|mps-server' -- timeout 120 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --configs tcpxr-host --ops $op --iters 40 --warmup 5 --min 1G --max 1G --timeout 100 --out $A/$out "$@" > $A/$out.log 2>&1
  el "$out rc=$? $(awk -F, 'NR>1{print $0}' $A/$out/summary.csv 2>/dev/null | tr '\n' ' ')"; grep -A30 '^host:' $A/$out.log | tee -a $A/steps.txt; }
b sr sendrecv
b ar all_reduce
b sr-peer4 sendrecv --env NCCL_NCHANNELS_PER_NET_PEER=4
b sr-io8 sendrecv --env NCCL_TCPXR_IO_THREADS=8
b sr2 sendrecv
b ar-io8 all_reduce --env NCCL_TCPXR_IO_THREADS=8
