#!/bin/bash
# run79 on one GPU (nvidia-h200, 16 cores): d943670 (NCCL_TCPXR_STATS reports each stripe's
# hand-offs to the I/O pool and their average wait). Two ranks as two NCCL hosts on GPU 0 under
# MPS, one size per run, 500 iterations: all_reduce 512 KiB and 2 MiB, sendrecv 256 KiB and 4 MiB;
# the stats lines of every connection.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/runNN.sh)
R=${OUT:-/tmp/out}; A=/tmp/run79; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
fin(){ tar czf $R/run79.tgz -C /tmp run79; cat $A/steps.txt; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
el "$(cat $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build
one(){ out=$1; op=$2; size=$3; timeout 60 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --configs tcpxr-host --ops $op --min $size --max $size --iters 500 --warmup 20 --timeout 50 --out $A/$out > $A/$out.log 2>&1; el "$out rc=$?"
  { echo "== $out"; grep -h "stats send\|stats receive" $A/$out/logs/* | sed 's/^[^]]*\] //'; } >> $A/stats.txt; }
one ar512k all_reduce 512K
one ar2m all_reduce 2M
one sr256k sendrecv 256K
one sr4m sendrecv 4M
