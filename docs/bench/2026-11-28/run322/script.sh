#!/bin/bash
# run322 (a 4-GPU host, 4 ranks one per GPU): run 321 found tcpxr in Socket's NCCL-side shape (lo
# reported at 10 Gb/s and NCCL's channels bounded to 2, as NCCL builds Socket's) 10-24 % faster at
# all_reduce and all_gather 1-4 MiB than its defaults (400 Gb/s, 8 channels built), where the
# tuner already runs them on 2 channels. Which of the two does it, and what it costs at bulk:
# dist/c46 (main) as is, with NCCL_MIN/MAX_NCHANNELS=2 alone (c2), NCCL_TCPXR_SPEED_MBPS=10000 alone
# (sp), both (sh), against Socket 1x1 and 2x2. 1. NCCL's TUNING log of 1-4 MiB (3 iterations) for
# each; 2. 512 KiB-4 MiB, 100 iterations, --cycles 3 --repeat 2; 3. 32-256 MiB, 10 iterations,
# --repeat 2. all_reduce and all_gather, host buffers.
cd "$(dirname "$0")/.."; A=/tmp/run322; source dist/common.sh
start_run; echo "c46: $(cat dist/c46/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
V=(--variant c2:NCCL_MIN_NCHANNELS=2 --variant c2:NCCL_MAX_NCHANNELS=2 --variant sp:NCCL_TCPXR_SPEED_MBPS=10000
   --variant sh:NCCL_TCPXR_SPEED_MBPS=10000 --variant sh:NCCL_MIN_NCHANNELS=2 --variant sh:NCCL_MAX_NCHANNELS=2)
C=tcpxr-host,tcpxr-host+c2,tcpxr-host+sp,tcpxr-host+sh
timeout 80 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c46 --mpirun --ranks 4 --ops all_reduce,all_gather --min 1M --max 4M --iters 3 --warmup 1 --timeout 60 \
  --configs $C "${V[@]}" --env NCCL_DEBUG_SUBSYS=TUNING --out $A/tuning > $A/tuning.txt 2>&1
el "tuning rc=$? $(grep -c ' ok, ' $A/tuning.txt) ok, $(grep -c FAILED $A/tuning.txt) failed"
for f in $A/tuning/logs/*.nccl.*; do echo "== $(basename $f)"; grep -h "Bytes -> Algo" $f | sed -E 's/^.*NCCL INFO //; s/opCount [0-9a-f]+//' | sort | uniq -c; done > $A/algos.txt
rm -rf $A/tuning/logs
timeout 260 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c46 --mpirun --ranks 4 --ops all_reduce,all_gather --min 512K --max 4M --iters 100 --warmup 10 --timeout 60 --repeat 2 --cycles 3 \
  --configs $C,socket-1x1,socket-2x2 "${V[@]}" --out $A/band > $A/band.txt 2>&1
el "band rc=$? $(grep -c ' ok, ' $A/band.txt) ok, $(grep -c FAILED $A/band.txt) failed"; rm -rf $A/band/r*/logs
timeout 220 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c46 --mpirun --ranks 4 --ops all_reduce,all_gather --min 32M --max 256M --iters 10 --warmup 2 --timeout 60 --repeat 2 \
  --configs $C,socket-1x1,socket-2x2 "${V[@]}" --out $A/bulk > $A/bulk.txt 2>&1
el "bulk rc=$? $(grep -c ' ok, ' $A/bulk.txt) ok, $(grep -c FAILED $A/bulk.txt) failed"; rm -rf $A/bulk/r*/logs
el done
