#!/bin/bash
# run354 (2 GPUs of a 2x or 4x H200; session 42): the all_reduce of 1-2 MiB at 2 ranks one per GPU,
# 0.85-0.94 of Socket 2x2 in runs 346 and 350 whatever tcpxr's stripes, chunk size or I/O threads.
# NCCL's ring cuts it into messages of 128-256 KiB: one chunk each, copied by one I/O thread a side,
# where Socket 2x2 cuts each into 64 KiB pieces over its 4 sockets and 2 threads. Cut finer: every
# nearly idle message in one piece per stripe of at least 64 KiB (NCCL_TCPXR_IDLE_CHUNK_BYTES=65536,
# auto gives it point-to-point connections only), or every message in 64 or 128 KiB chunks. main's
# head (dist/c53), all_reduce 512 KiB-4 MiB, 40 iterations, -N 3, three passes alternated, against
# Socket 1x1 and 2x2.
cd "$(dirname "$0")/.."; A=/tmp/run354; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0,1; echo "c53: $(cat dist/c53/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
timeout 400 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c53 --mpirun --ranks 2 --ops all_reduce --min 512K --max 4M --iters 40 --warmup 10 --cycles 3 --timeout 40 --repeat 3 \
  --configs tcpxr-host,tcpxr-host+ic64,tcpxr-host+c64,tcpxr-host+c128,socket-1x1,socket-2x2 \
  --variant ic64:NCCL_TCPXR_IDLE_CHUNK_BYTES=65536 --variant c64:NCCL_TCPXR_CHUNK_BYTES=65536 --variant c128:NCCL_TCPXR_CHUNK_BYTES=131072 --out $A/cut > $A/cut.txt 2>&1
el "cut rc=$? $(grep -c ' ok, ' $A/cut.txt) ok, $(grep -c FAILED $A/cut.txt) failed"
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
