#!/bin/bash
# run85 on one GPU (nvidia-h200, 16 cores): a receive worker's low-water mark. 8182da7 (dist:
# SO_RCVLOWAT up to 512 KiB), the same with 128 KiB (dist/q128, uncommitted), 2bb4862 (dist/old);
# all_reduce and sendrecv 256 KiB - 16 MiB and bulk 128 MiB - 1 GiB under MPS, alternated three
# times; Socket 1x1/2x2 twice; bulk 512 MiB once more per library with NCCL_TCPXR_STATS=1.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run85.sh)
R=${OUT:-/tmp/out}; A=/tmp/run85; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run85.tgz -C /tmp run85; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
B=$!
wait $B; el "$(cat $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build
m(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --iters 50 --warmup 10 --min 32K --max 4M --timeout 60 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
bulk(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --iters 10 --warmup 3 --min 128M --max 1G --timeout 90 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
b=$(( $(date +%s)-T0 ))
m s1 $((b + 14)) --configs socket-1x1,socket-2x2 --min 256K --max 16M; b=$((b + 14))
for i in 1 2 3; do
  for v in new q128 old; do
    d=dist; [ $v = q128 ] && d=dist/q128; [ $v = old ] && d=dist/old
    m $v$i $((b + 10)) --plugin-dir $d --configs tcpxr-host --min 256K --max 16M; b=$((b + 10))
    bulk b$v$i $((b + 20)) --plugin-dir $d --configs tcpxr-host; b=$((b + 20))
  done
done
m s2 $((b + 14)) --configs socket-1x1,socket-2x2 --min 256K --max 16M; b=$((b + 14))
for v in new old; do
  d=dist; [ $v = old ] && d=dist/old
  bulk st$v $((b + 15)) --plugin-dir $d --configs tcpxr-host --min 512M --max 512M --env NCCL_TCPXR_STATS=1; b=$((b + 15))
done
