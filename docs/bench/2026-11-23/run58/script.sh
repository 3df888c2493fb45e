#!/bin/bash
# GPU run W on one GPU (nvidia-h200, 16 cores), two ranks as two NCCL hosts under MPS: issue 14's
# mid band against the chunk size. A 512 KiB NCCL message is one 512 KiB chunk on one stripe at the
# default (NCCL_TCPXR_CHUNK_BYTES=524288); at 131072 it is four chunks on four stripes, moved by four
# I/O threads at once. Default / 128K / 256K alternating twice, all_reduce and sendrecv 64 KiB -
# 4 MiB, 50 iterations; Socket default and 2x2 beside; then bulk 128 MiB - 1 GiB, default and 128K.
# Last, the session's code with GPU buffers: tcpxr-gpu 8 B - 8 MiB with one hardware queue and
# under MPS (correctness).
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/out}; A=/tmp/runW; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/runW.tgz -C /tmp runW; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | head -40; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the project
# commits no script that builds nccl-tests. ncclTests/README.md says how to build it.)
el "$(tail -1 $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build; P=dist
mid(){ out=$1; shift; timeout $(left $1) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir $P --iters 50 --warmup 10 --min 64K --max 4M --timeout 60 --out $A/$out "${@:2}" > $A/$out.log 2>&1; el "$out rc=$?"; }
bulk(){ out=$1; shift; timeout $(left $1) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir $P --iters 10 --warmup 3 --min 128M --max 1G --timeout 90 --out $A/$out "${@:2}" > $A/$out.log 2>&1; el "$out rc=$?"; }
mid s 80 --configs socket,socket-2x2
for i in 1 2; do
  mid d$i $((80 + 75 * i - 45)) --configs tcpxr-host
  mid c128k$i $((80 + 75 * i - 20)) --configs tcpxr-host --env NCCL_TCPXR_CHUNK_BYTES=131072
  mid c256k$i $((80 + 75 * i)) --configs tcpxr-host --env NCCL_TCPXR_CHUNK_BYTES=262144
done
bulk bd 300 --configs tcpxr-host
bulk b128k 360 --configs tcpxr-host --env NCCL_TCPXR_CHUNK_BYTES=131072
bulk bs 430 --configs socket-2x2
timeout $(left 480) python3 ncclTests/run_nccl_tests.py --one-gpu --nccl-tests $NT --plugin-dir $P --iters 5 --warmup 2 --max 8M --timeout 40 --out $A/onequeue --configs tcpxr-gpu --env CUDA_DEVICE_MAX_CONNECTIONS=1 > $A/onequeue.log 2>&1; el "onequeue rc=$?"
timeout $(left 540) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir $P --iters 5 --warmup 2 --max 8M --timeout 40 --out $A/gpu-mps --configs tcpxr-gpu > $A/gpu-mps.log 2>&1; el "gpu-mps rc=$?"
