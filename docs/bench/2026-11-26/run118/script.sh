#!/bin/bash
# run118 on one GPU (nvidia-h200, 16 cores): cbfc137 (511fa66's library). Every other collective
# nccl-tests has (broadcast, reduce, all_gather, reduce_scatter, alltoall) through tcpxr, host and
# GPU buffers, checked (5 iterations, 8 B - 64 MiB, under MPS), now that the tuner sets channels
# for any collective on the ring; then torch.distributed (torch_bench.py, all_reduce and sendrecv
# to 64 MiB) with tcpxr's NCCL defaults, under MPS.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run118.sh)
R=${OUT:-/tmp/out}; A=/tmp/run118; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
fin(){ tar czf $R/run118.tgz -C /tmp run118; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt; } > $A/machine.txt 2>&1
NT=ncclTests/nccl-tests/build
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
B=$!
timeout 200 python3 ncclTests/torch_bench.py --one-gpu --mps --plugin-dir dist --configs tcpxr-host,tcpxr-gpu --max 64M --iters 10 --warmup 3 --timeout 90 --out $A/torch > $A/torch.log 2>&1; el "torch rc=$?"
grep -h -E "MIN_NCHANNELS|tuner: communicator|Channel 0[0-9]/[0-9]* : 0 1" $A/torch/*/* $A/torch/* 2>/dev/null | sed 's/^[^]]*\] //;s/0x[0-9a-f]*/ID/' | sort | uniq -c | head -20 | tee -a $A/steps.txt
wait $B; el "$(cat $A/nccl-tests-build.txt)"
timeout 250 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --ops broadcast,reduce,all_gather,reduce_scatter,alltoall --iters 5 --warmup 2 --max 64M --timeout 60 --out $A/colls --configs tcpxr-host,tcpxr-gpu > $A/colls.log 2>&1; el "colls rc=$?"
