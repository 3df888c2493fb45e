#!/bin/bash
# run92 on one GPU (nvidia-h200, 16 cores): why a striped sendrecv of 256 KiB takes about as long
# as one of 512 KiB (run 91). ddf0b7f: tcpxr-bench latency (no GPU) at 128 KiB - 512 KiB; NCCL
# sendrecv 128 KiB - 512 KiB, 500 iterations, with NCCL_TCPXR_STATS=1, under MPS.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run92.sh)
R=${OUT:-/tmp/out}; A=/tmp/run92; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
fin(){ tar czf $R/run92.tgz -C /tmp run92; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
B=$!
for s in 128K 192K 256K 384K 512K; do timeout 30 dist/tcpxr-bench latency --size $s --iters 5000 2>&1 | grep -v INFO; done > $A/bench-latency.txt; el "latency done"
wait $B; el "$(cat $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build
for s in 128K 256K 512K; do
  timeout 60 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --configs tcpxr-host --ops sendrecv --min $s --max $s --iters 500 --warmup 20 --timeout 50 --out $A/st$s --env NCCL_TCPXR_STATS=1 > $A/st$s.log 2>&1; el "st$s rc=$?"
  { echo "== sendrecv $s"; grep -h "stats send\|stats receive" $A/st$s/logs/* | grep -v " 0 messages" | sed 's/^[^]]*\] //'; } >> $A/stats.txt
done
