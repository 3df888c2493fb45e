#!/bin/bash
# run102 on one GPU (nvidia-h200, 16 cores): e839f10's library. (1) the small sendrecv gap
# (8 B 0.80-0.86x Socket's best in run 98): sendrecv 8 B - 64 KiB, 200 iterations, Socket default
# against tcpxr, tcpxr with NCCL's own 128 KiB point-to-point chunk, Socket with tcpxr's 512 KiB
# one, tcpxr with no I/O pool; alternated twice. (2) sendrecv at bulk against NCCL's
# point-to-point chunk: 512 KiB (tcpxr's default), 1 MiB, 2 MiB, alternated twice.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run102.sh)
R=${OUT:-/tmp/out}; A=/tmp/run102; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run102.tgz -C /tmp run102; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
B=$!
wait $B; el "$(cat $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build
m(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --ops sendrecv --iters 200 --warmup 20 --min 8 --max 64K --timeout 60 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
b=$(( $(date +%s)-T0 ))
for i in 1 2; do
  m s$i $((b + 15)) --configs socket; b=$((b + 15))
  m d$i $((b + 15)) --configs tcpxr-host; b=$((b + 15))
  m c128k$i $((b + 15)) --configs tcpxr-host --env NCCL_P2P_NET_CHUNKSIZE=131072; b=$((b + 15))
  m s512k$i $((b + 15)) --configs socket --env NCCL_P2P_NET_CHUNKSIZE=524288; b=$((b + 15))
  m io0$i $((b + 15)) --configs tcpxr-host --env NCCL_TCPXR_IO_THREADS=0; b=$((b + 15))
done
bulk(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --ops sendrecv --iters 10 --warmup 3 --min 1M --max 1G --timeout 90 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
for i in 1 2; do
  bulk b512k$i $((b + 25)) --configs tcpxr-host; b=$((b + 25))
  bulk b1m$i $((b + 25)) --configs tcpxr-host --env NCCL_P2P_NET_CHUNKSIZE=1048576; b=$((b + 25))
  bulk b2m$i $((b + 25)) --configs tcpxr-host --env NCCL_P2P_NET_CHUNKSIZE=2097152; b=$((b + 25))
done
