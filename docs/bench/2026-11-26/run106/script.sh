#!/bin/bash
# run106 on one GPU (nvidia-h200, 16 cores): the auto I/O pool that shares the host's cores
# (uncommitted on 21f9e06: each tcpxr process names itself; two ranks on 16 cores take 6 threads
# each) against e839f10 (dist/old: 8 each). Bulk 256 MiB - 1 GiB (10 iterations) alternated three
# times, the band 128 KiB - 8 MiB (100 iterations) twice, 8 B - 64 KiB once; the pool's log line;
# 256 idle connections.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run106.sh)
R=${OUT:-/tmp/out}; A=/tmp/run106; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run106.tgz -C /tmp run106; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt dist/old/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
B=$!
timeout 60 dist/deps/idle --nocapture > $A/idle-256.txt 2>&1; el "idle rc=$? $(grep connections $A/idle-256.txt)"
wait $B; el "$(cat $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build
r(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --configs tcpxr-host --timeout 90 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
band="--iters 100 --warmup 10 --min 128K --max 8M"; bulk="--iters 10 --warmup 3 --min 256M --max 1G"
b=$(( $(date +%s)-T0 ))
r small $((b + 25)) --plugin-dir dist --iters 100 --warmup 10 --min 8 --max 64K; b=$((b + 25))
grep -h "I/O pool" $A/small/logs/* | sed 's/^[^]]*\] //' | sort | uniq -c | tee -a $A/steps.txt
for i in 1 2 3; do
  r bnew$i $((b + 25)) $bulk --plugin-dir dist; b=$((b + 25))
  r bold$i $((b + 25)) $bulk --plugin-dir dist/old; b=$((b + 25))
done
for i in 1 2; do
  r new$i $((b + 15)) $band --plugin-dir dist; b=$((b + 15))
  r old$i $((b + 15)) $band --plugin-dir dist/old; b=$((b + 15))
done
