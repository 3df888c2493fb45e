#!/bin/bash
# run73 on one GPU (nvidia-h200, 16 cores): commit 5512f2b. What NCCL picks (algorithm, protocol,
# channels: NCCL_DEBUG_SUBSYS=TUNING) for Socket 1x1, for tcpxr with its tuner and without it, in
# the all_reduce band (128 KiB - 2 MiB); then the band (32 KiB - 4 MiB) under MPS with tcpxr's tuner
# off and each protocol forced (NCCL_PROTO), beside the default and Socket 1x1/2x2.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/runNN.sh)
R=${OUT:-/tmp/out}; A=/tmp/run73; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run73.tgz -C /tmp run73; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, in the background, logging to nccl-tests-build.txt; that step is left out of
# this copy: the project commits no script that builds nccl-tests. ncclTests/README.md says how.)
B=$!
wait $B; el "$(cat $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build
m(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --iters 50 --warmup 10 --min 32K --max 4M --timeout 60 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
t(){ out=$1; shift; timeout 40 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --iters 5 --warmup 2 --ops all_reduce --min 128K --max 2M --timeout 30 --out $A/$out --env NCCL_DEBUG_SUBSYS=TUNING "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
t tune-socket --configs socket-1x1
t tune-tcpxr --configs tcpxr-host
t tune-notuner --configs tcpxr-host --env NCCL_TCPXR_TUNER=0
for d in tune-socket tune-tcpxr tune-notuner; do
  { echo "== $d"; grep -h -E "Bytes -> Algo|AllReduce:" $A/$d/logs/* | sed 's/^[^]]*\] //' | sed -E 's/opCount [0-9a-f]+//' | sort | uniq -c | sort -rn | head -30; } >> $A/tuning.txt
done
b=$(( $(date +%s)-T0 ))
m def1 $((b + 12)) --configs tcpxr-host --ops all_reduce
for p in Simple LL LL128; do
  b=$((b + 12)); m off-$p $((b + 14)) --configs tcpxr-host --ops all_reduce --env NCCL_TCPXR_TUNER=0 --env NCCL_PROTO=$p
done
b=$((b + 14)); m s1 $((b + 14)) --configs socket-1x1 --ops all_reduce
b=$((b + 14)); m s1-LL128 $((b + 14)) --configs socket-1x1 --ops all_reduce --env NCCL_PROTO=LL128
b=$((b + 14)); m s1-Simple $((b + 14)) --configs socket-1x1 --ops all_reduce --env NCCL_PROTO=Simple
