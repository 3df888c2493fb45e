#!/bin/bash
# run62 on one GPU (nvidia-h200, 16 cores), two ranks as two NCCL hosts under MPS. Run 61 showed
# NCCL's all_reduce of 512 KiB is 64 KiB messages (4 per channel per all_reduce), which tcpxr sends
# inline (NCCL_TCPXR_INLINE_IDLE_BYTES auto = 64 KiB), so NCCL's one proxy thread copies every byte of
# both channels, both ways. Here: inline when idle up to 64 KiB (default), 32 KiB, 16 KiB (= the
# always-inline limit, so idle inlining off: 32-64 KiB messages go to the stripes and the I/O pool),
# the last also with the pool's spin off; alternated twice, all_reduce and sendrecv 8 B - 16 MiB,
# 50 iterations; Socket default, 1x1, 2x2, 4x4 beside.
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/out}; A=/tmp/run62; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run62.tgz -C /tmp run62; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the project
# commits no script that builds nccl-tests. ncclTests/README.md says how to build it.)
el "$(tail -1 $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build; P=dist
m(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir $P --iters 50 --warmup 10 --min 8 --max 16M --timeout 60 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
m s 110 --configs socket,socket-1x1,socket-2x2,socket-4x4
for i in 1 2; do
  b=$((110 + 100 * (i - 1)))
  m d$i $((b + 25)) --configs tcpxr-host
  m i32k$i $((b + 50)) --configs tcpxr-host --env NCCL_TCPXR_INLINE_IDLE_BYTES=32768
  m i16k$i $((b + 75)) --configs tcpxr-host --env NCCL_TCPXR_INLINE_IDLE_BYTES=16384
  m i16ks0$i $((b + 100)) --configs tcpxr-host --env NCCL_TCPXR_INLINE_IDLE_BYTES=16384 --env NCCL_TCPXR_IO_SPIN_US=0
done
