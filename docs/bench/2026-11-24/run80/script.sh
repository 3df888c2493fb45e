#!/bin/bash
# run80 on one GPU (nvidia-h200, 16 cores): d943670 with the spinning idle workers of 0e2679d and
# 34f6e2f re-applied (uncommitted; NCCL_TCPXR_IO_SPIN_US, NCCL_TCPXR_IO_SPIN_THREADS), now that the
# stats show each hand-off's wait. One library: spinning off (IO_SPIN_US=0, today's behaviour), one
# spinner for 200 us (the re-applied default), two spinners; all_reduce and sendrecv 32 KiB - 16 MiB
# under MPS alternated three times, Socket 1x1/2x2 twice; then the stats of all_reduce 512 KiB and
# sendrecv 4 MiB for each setting.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/runNN.sh)
R=${OUT:-/tmp/out}; A=/tmp/run80; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run80.tgz -C /tmp run80; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
B=$!
wait $B; el "$(cat $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build
m(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --iters 50 --warmup 10 --min 32K --max 4M --timeout 60 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
b=$(( $(date +%s)-T0 ))
for i in 1 2 3; do
  m off$i $((b + 12)) --configs tcpxr-host --max 16M --env NCCL_TCPXR_IO_SPIN_US=0
  m spin1$i $((b + 24)) --configs tcpxr-host --max 16M
  m spin2$i $((b + 36)) --configs tcpxr-host --max 16M --env NCCL_TCPXR_IO_SPIN_THREADS=2
  b=$((b + 36))
  [ $i -lt 3 ] && { m s$i $((b + 20)) --configs socket-1x1,socket-2x2 --max 16M; b=$((b + 20)); }
done
one(){ out=$1; op=$2; size=$3; shift 3; timeout 40 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --configs tcpxr-host --ops $op --min $size --max $size --iters 500 --warmup 20 --timeout 30 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"
  { echo "== $out"; grep -h "stats send\|stats receive" $A/$out/logs/* | grep -v " 0 messages" | sed 's/^[^]]*\] //; s/queued ahead avg [0-9.]* max [0-9]*, //g'; } >> $A/stats.txt; }
for v in off spin1 spin2; do
  case $v in off) e="--env NCCL_TCPXR_IO_SPIN_US=0";; spin1) e="";; spin2) e="--env NCCL_TCPXR_IO_SPIN_THREADS=2";; esac
  one st-$v-ar512k all_reduce 512K $e
  one st-$v-sr4m sendrecv 4M $e
done
