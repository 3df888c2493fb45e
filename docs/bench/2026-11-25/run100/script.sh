#!/bin/bash
# run100 on one GPU (nvidia-h200, 16 cores): run 99 again for NCCL_TCPXR_IO_SPIN_THREADS=4
# against the default 1, a00ab56 (= 53adf32's code): all_reduce and sendrecv 128 KiB - 4 MiB under
# MPS alternated four times, Socket 1x1 twice; bulk 128 MiB - 1 GiB alternated twice.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run100.sh)
R=${OUT:-/tmp/out}; A=/tmp/run100; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run100.tgz -C /tmp run100; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
B=$!
wait $B; el "$(cat $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build
m(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --iters 50 --warmup 10 --min 128K --max 4M --timeout 60 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
b=$(( $(date +%s)-T0 ))
for i in 1 2 3 4; do
  [ $((i % 2)) = 1 ] && { m s$i $((b + 10)) --configs socket-1x1; b=$((b + 10)); }
  m d$i $((b + 7)) --configs tcpxr-host; b=$((b + 7))
  m sp4$i $((b + 7)) --configs tcpxr-host --env NCCL_TCPXR_IO_SPIN_THREADS=4; b=$((b + 7))
done
bulk(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --iters 10 --warmup 3 --min 128M --max 1G --timeout 90 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
for i in 1 2; do
  bulk bd$i $((b + 20)) --configs tcpxr-host; b=$((b + 20))
  bulk bsp4$i $((b + 20)) --configs tcpxr-host --env NCCL_TCPXR_IO_SPIN_THREADS=4; b=$((b + 20))
done
