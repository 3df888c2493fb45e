#!/bin/bash
# run283 (a 4-GPU host, 64 cores; 2026-11-28, thirty-second session): where the 4-rank gaps of
# run 281a-281b come from (main 04fef03a, dist/c30; 4 ranks one per GPU, host buffers, 200
# iterations, two passes in rotated order, medians). At 4 ranks tcpxr's sendrecv of 1 MiB took
# 429 us against 190 at 2 ranks (run 282), its receive hand-offs waiting 43-59 us against 16-29.
#  m: sendrecv, all_reduce, all_gather 256 KiB-4 MiB: tcpxr at its defaults; idle I/O threads
#     spinning 5 ms instead of 200 us; 2 and 1 stripes; no idle chunking of point-to-point
#     messages; 4 I/O threads instead of 10; Socket 1x1 and 2x2 for reference.
#  s: all_reduce 4-64 KiB (tcpxr 0.59-0.85 of Socket at 8-32 KiB, left to NCCL's choice below a
#     16 KiB share): tcpxr's defaults, without its tuner, on 4 channels built, NCCL's ring in
#     Simple on one channel (what the tuner picks from a 16 KiB share); Socket default and 1x1;
#     then NCCL's choices for tcpxr and Socket (TUNING log, 2 iterations, not timed).
cd "$(dirname "$0")/.."; A=/tmp/run283; source dist/common.sh
start_run; echo "c30: $(cat dist/c30/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
L=dist/c30
timeout 380 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir $L --mpirun --ranks 4 --ops sendrecv,all_reduce,all_gather --min 256K --max 4M --iters 200 --warmup 20 --timeout 40 --repeat 2 \
  --configs tcpxr-host,tcpxr-host+sp,tcpxr-host+s2,tcpxr-host+s1,tcpxr-host+ic,tcpxr-host+t4,socket-1x1,socket-2x2 \
  --variant sp:NCCL_TCPXR_IO_SPIN_US=5000 --variant s2:NCCL_TCPXR_STRIPES=2 --variant s1:NCCL_TCPXR_STRIPES=1 --variant ic:NCCL_TCPXR_IDLE_CHUNK_BYTES=0 --variant t4:NCCL_TCPXR_IO_THREADS=4 \
  --out $A/m > $A/m.txt 2>&1
el "m rc=$? $(grep -c ' ok, ' $A/m.txt) ok, $(grep -c FAILED $A/m.txt) failed"
timeout 110 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir $L --mpirun --ranks 4 --ops all_reduce --min 4K --max 64K --iters 200 --warmup 20 --timeout 30 --repeat 2 \
  --configs tcpxr-host,tcpxr-host+nt,tcpxr-host+c4,tcpxr-host+r1,socket,socket-1x1 \
  --variant nt:NCCL_TCPXR_TUNER=0 --variant c4:NCCL_MIN_NCHANNELS=4 --variant c4:NCCL_MAX_NCHANNELS=4 \
  --variant r1:NCCL_ALGO=Ring --variant r1:NCCL_PROTO=Simple --variant r1:NCCL_MIN_NCHANNELS=1 --variant r1:NCCL_MAX_NCHANNELS=1 \
  --out $A/s > $A/s.txt 2>&1
el "s rc=$? $(grep -c ' ok, ' $A/s.txt) ok, $(grep -c FAILED $A/s.txt) failed"
timeout 40 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir $L --mpirun --ranks 4 --ops all_reduce --min 4K --max 64K --iters 2 --warmup 1 --timeout 30 \
  --configs tcpxr-host,socket --env NCCL_DEBUG_SUBSYS=INIT,NET,TUNING --out $A/tuning > $A/tuning.txt 2>&1
el "tuning rc=$? $(grep -c ' ok, ' $A/tuning.txt) ok"
for f in $A/tuning/logs/all_reduce.*; do echo "$(basename $f): $(grep -ho 'TUNING.*' $f | sed 's/[0-9a-fx]*0x[0-9a-f]*//' | cut -c1-200 | sort | uniq -c | sort -rn | head -8)"; done > $A/tuning-choices.txt 2>&1
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
