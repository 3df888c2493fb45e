#!/bin/bash
# run61 on one GPU (nvidia-h200, 16 cores), two ranks as two NCCL hosts under MPS: where issue 14's
# all_reduce mid band (128 KiB - 1 MiB) loses to Socket. NCCL's choices per size for Socket 2x2 and
# tcpxr (TUNING); tcpxr's counters at one size (512 KiB, 200 iterations: messages per all_reduce);
# variants alternated twice, 64 KiB - 2 MiB all_reduce, 100 iterations: default (spin 200 us), no I/O
# threads (NCCL's thread moves every byte), inline when idle up to 512 KiB, NCCL's own choice (tuner
# off), tuner off with Simple on 1 channel and with LL on 2, Socket 1x1 and 2x2.
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/out}; A=/tmp/run61; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run61.tgz -C /tmp run61; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; cat $A/choices-*.txt; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the project
# commits no script that builds nccl-tests. ncclTests/README.md says how to build it.)
el "$(tail -1 $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build; P=dist
run(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir $P --ops all_reduce --timeout 60 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
run tune-s 40 --configs socket-2x2,socket-1x1 --iters 5 --warmup 1 --min 32K --max 4M --env NCCL_DEBUG_SUBSYS=INIT,NET,TUNING
run tune-t 60 --configs tcpxr-host --iters 5 --warmup 1 --min 32K --max 4M --env NCCL_DEBUG_SUBSYS=INIT,NET,TUNING
for c in s t; do grep -h "AllReduce: .* Bytes -> " $A/tune-$c/logs/* 2>/dev/null | sed 's/.*AllReduce/AllReduce/' | sort -u > $A/choices-$c.txt; done
run one512k 80 --configs tcpxr-host --iters 200 --warmup 0 --min 512K --max 512K
m(){ out=$1; lim=$2; shift 2; run $out $lim --iters 100 --warmup 10 --min 64K --max 2M "$@"; }
for i in 1 2; do
  b=$((80 + 120 * (i - 1)))
  m s$i $((b + 20)) --configs socket-1x1,socket-2x2
  m d$i $((b + 35)) --configs tcpxr-host
  m noio$i $((b + 50)) --configs tcpxr-host --env NCCL_TCPXR_IO_THREADS=0
  m inl$i $((b + 65)) --configs tcpxr-host --env NCCL_TCPXR_INLINE_IDLE_BYTES=524288
  m nct$i $((b + 80)) --configs tcpxr-host --env NCCL_TCPXR_TUNER=0
  m s1ch$i $((b + 95)) --configs tcpxr-host --env NCCL_TCPXR_TUNER=0 --env NCCL_PROTO=Simple --env NCCL_MAX_NCHANNELS=1
  m ll2$i $((b + 110)) --configs tcpxr-host --env NCCL_TCPXR_TUNER=0 --env NCCL_PROTO=LL --env NCCL_MAX_NCHANNELS=2
done
