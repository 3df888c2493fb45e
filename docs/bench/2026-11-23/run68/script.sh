#!/bin/bash
# run68 on one GPU (nvidia-h200, 16 cores), two ranks as two NCCL hosts under MPS: how far should
# point-to-point connections send inline while idle? sendrecv_perf opens only NCCL's p2p
# connections, so NCCL_TCPXR_INLINE_IDLE_BYTES here acts on them alone. 64 KiB (default), 128 KiB,
# 256 KiB, 512 KiB, alternated three times, sendrecv 8 B - 16 MiB, 50 iterations; Socket 1x1 and
# 2x2 twice. Library of commit 0b63418.
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/out}; A=/tmp/run68; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run68.tgz -C /tmp run68; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the project
# commits no script that builds nccl-tests. ncclTests/README.md says how to build it.)
el "$(tail -1 $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build
m(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --ops sendrecv --iters 50 --warmup 10 --min 8 --max 16M --timeout 60 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
for i in 1 2 3; do
  b=$((40 + 40 * (i - 1)))
  m i64k$i $((b + 8)) --configs tcpxr-host
  m i128k$i $((b + 16)) --configs tcpxr-host --env NCCL_TCPXR_INLINE_IDLE_BYTES=131072
  m i256k$i $((b + 24)) --configs tcpxr-host --env NCCL_TCPXR_INLINE_IDLE_BYTES=262144
  m i512k$i $((b + 32)) --configs tcpxr-host --env NCCL_TCPXR_INLINE_IDLE_BYTES=524288
  [ $i -lt 3 ] && m s$i $((b + 40)) --configs socket-1x1,socket-2x2
done
