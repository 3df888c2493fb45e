#!/bin/bash
# run105 on one GPU (nvidia-h200, 16 cores): e839f10's library. Run 104 found 6 I/O threads per
# rank faster at bulk than the default 8 (two ranks share 16 cores). The curve: bulk (256 MiB -
# 1 GiB, 10 iterations) with NCCL_TCPXR_IO_THREADS 5, 6, 7 and the default, alternated three
# times; the band (128 KiB - 8 MiB, 100 iterations) with 6 against the default, three times.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run105.sh)
R=${OUT:-/tmp/out}; A=/tmp/run105; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run105.tgz -C /tmp run105; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
B=$!
wait $B; el "$(cat $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build
r(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --configs tcpxr-host --timeout 90 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
band="--iters 100 --warmup 10 --min 128K --max 8M"; bulk="--iters 10 --warmup 3 --min 256M --max 1G"
b=$(( $(date +%s)-T0 ))
for i in 1 2 3; do
  r bd$i $((b + 25)) $bulk; b=$((b + 25))
  for n in 5 6 7; do r bio$n-$i $((b + 25)) $bulk --env NCCL_TCPXR_IO_THREADS=$n; b=$((b + 25)); done
done
for i in 1 2 3; do
  r d$i $((b + 15)) $band; b=$((b + 15))
  r io6-$i $((b + 15)) $band --env NCCL_TCPXR_IO_THREADS=6; b=$((b + 15))
done
