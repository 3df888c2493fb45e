#!/bin/bash
# run104 on one GPU (nvidia-h200, 16 cores): e839f10's library. Is the band short of cores? Two
# ranks share 16 cores and each starts 8 I/O threads (auto: the cores, at most 8). tcpxr with
# NCCL_TCPXR_IO_THREADS 4, 6 and the default, all_reduce and sendrecv 128 KiB - 8 MiB (100
# iterations) and 256 MiB - 1 GiB (10 iterations), alternated twice; Socket 1x1 and 2x2 once.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run104.sh)
R=${OUT:-/tmp/out}; A=/tmp/run104; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run104.tgz -C /tmp run104; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
B=$!
wait $B; el "$(cat $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build
r(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --timeout 90 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
band="--iters 100 --warmup 10 --min 128K --max 8M"; bulk="--iters 10 --warmup 3 --min 256M --max 1G"
b=$(( $(date +%s)-T0 ))
r s $((b + 40)) $band --configs socket-1x1,socket-2x2; b=$((b + 40))
for i in 1 2; do
  r d$i $((b + 20)) $band --configs tcpxr-host; b=$((b + 20))
  r io4$i $((b + 20)) $band --configs tcpxr-host --env NCCL_TCPXR_IO_THREADS=4; b=$((b + 20))
  r io6$i $((b + 20)) $band --configs tcpxr-host --env NCCL_TCPXR_IO_THREADS=6; b=$((b + 20))
done
for i in 1 2; do
  r bd$i $((b + 25)) $bulk --configs tcpxr-host; b=$((b + 25))
  r bio4$i $((b + 25)) $bulk --configs tcpxr-host --env NCCL_TCPXR_IO_THREADS=4; b=$((b + 25))
  r bio6$i $((b + 25)) $bulk --configs tcpxr-host --env NCCL_TCPXR_IO_THREADS=6; b=$((b + 25))
done
