#!/bin/bash
# run225 (the 4-GPU host of run 224, right after it; 2026-11-27, twenty-fifth session): Socket's
# four tunings at 4 ranks one per GPU, all four collectives 256 KiB-512 MiB, 20 iterations, with
# tcpxr's window (dist/w) before and after; then the correctness set for the data path's change on
# GPU 0 (common.sh's checks: 3 and 4 ranks under MPS, host and GPU buffers, NCCL/Ring/Tree; 4 ranks
# with CUDA_DEVICE_MAX_CONNECTIONS=1).
cd "$(dirname "$0")/.."; A=/tmp/run225; source dist/common.sh
start_run
{ echo "new: $(cat dist/w/commit.txt)"; } >> $A/machine.txt
tests_228
r(){ local out=$1 lib=$2; shift 2
  timeout 300 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir $lib --mpirun --ranks 4 --ops all_reduce,all_gather,reduce_scatter,sendrecv --min 256K --max 512M --iters 20 --warmup 5 --timeout 60 --out $A/$out "$@" > $A/$out.txt 2>&1
  el "$out rc=$? $(grep -c ' ok, ' $A/$out.txt) ok, $(grep -c FAILED $A/$out.txt) failed"; }
r b3 dist/w --configs tcpxr-host
r socket dist/w --configs socket,socket-1x1,socket-2x2,socket-4x4
r b4 dist/w --configs tcpxr-host
checks dist/w
el done
