#!/bin/bash
# run63 on one GPU (nvidia-h200, 16 cores), two ranks as two NCCL hosts under MPS: how many idle I/O
# threads should spin. Spin off (0, the behaviour before this session), 200 us with 1 spinner
# (default), 2 and 4 spinners, 4 spinners with idle inlining off (NCCL_TCPXR_INLINE_IDLE_BYTES=16K:
# NCCL's 32-64 KiB messages go to the stripes); alternated twice, all_reduce and sendrecv 8 B - 16 MiB,
# 50 iterations; Socket 1x1, 2x2 beside. Bulk 128 MiB - 1 GiB for spin 0, 1 and 4 spinners, Socket 2x2.
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/out}; A=/tmp/run63; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run63.tgz -C /tmp run63; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the project
# commits no script that builds nccl-tests. ncclTests/README.md says how to build it.)
el "$(tail -1 $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build; P=dist
m(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir $P --iters 50 --warmup 10 --min 8 --max 16M --timeout 60 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
bulk(){ out=$1; shift; timeout $(left $1) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir $P --iters 10 --warmup 3 --min 128M --max 1G --timeout 90 --out $A/$out "${@:2}" > $A/$out.log 2>&1; el "$out rc=$?"; }
m s 60 --configs socket-1x1,socket-2x2
for i in 1 2; do
  b=$((60 + 60 * (i - 1)))
  m sp0-$i $((b + 12)) --configs tcpxr-host --env NCCL_TCPXR_IO_SPIN_US=0
  m d$i $((b + 24)) --configs tcpxr-host
  m st2-$i $((b + 36)) --configs tcpxr-host --env NCCL_TCPXR_IO_SPIN_THREADS=2
  m st4-$i $((b + 48)) --configs tcpxr-host --env NCCL_TCPXR_IO_SPIN_THREADS=4
  m st4i-$i $((b + 60)) --configs tcpxr-host --env NCCL_TCPXR_IO_SPIN_THREADS=4 --env NCCL_TCPXR_INLINE_IDLE_BYTES=16384
done
bulk b0 210 --configs tcpxr-host --env NCCL_TCPXR_IO_SPIN_US=0
bulk bd 240 --configs tcpxr-host
bulk bst4 270 --configs tcpxr-host --env NCCL_TCPXR_IO_SPIN_THREADS=4
bulk bs 310 --configs socket-2x2
