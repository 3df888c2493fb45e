#!/bin/bash
# run67 on one GPU (nvidia-h200, 16 cores), two ranks as two NCCL hosts under MPS: the tuner's new
# rule (commit 0b63418: all_reduce per-rank shares of 32-512 KiB on 1 channel) against the previous
# one (the same library at f6395ef, carried as dist/old), all_reduce and sendrecv 8 B - 16 MiB,
# 50 iterations, alternated three times; Socket 1x1 and 2x2 twice. Then GPU buffers (device unpack)
# on the new library with one hardware queue and under MPS (correctness).
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/out}; A=/tmp/run67; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run67.tgz -C /tmp run67; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; cat dist/commit.txt; echo "old:"; cat dist/old/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the project
# commits no script that builds nccl-tests. ncclTests/README.md says how to build it.)
el "$(tail -1 $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build
m(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --iters 50 --warmup 10 --min 8 --max 16M --timeout 60 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
for i in 1 2 3; do
  b=$((45 + 45 * (i - 1)))
  m new$i $((b + 12)) --plugin-dir dist --configs tcpxr-host
  m old$i $((b + 24)) --plugin-dir dist/old --configs tcpxr-host
  [ $i -lt 3 ] && m s$i $((b + 45)) --plugin-dir dist --configs socket-1x1,socket-2x2
done
timeout $(left 220) python3 ncclTests/run_nccl_tests.py --one-gpu --nccl-tests $NT --plugin-dir dist --iters 5 --warmup 2 --max 8M --timeout 40 --out $A/onequeue --configs tcpxr-gpu --env CUDA_DEVICE_MAX_CONNECTIONS=1 > $A/onequeue.log 2>&1; el "onequeue rc=$?"
timeout $(left 260) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --iters 5 --warmup 2 --max 8M --timeout 40 --out $A/gpu-mps --configs tcpxr-gpu > $A/gpu-mps.log 2>&1; el "gpu-mps rc=$?"
grep -h "tuner: communicator" $A/new1/logs/* | sed 's/^[^ ]* //' | sort -u > $A/tuner-lines.txt
