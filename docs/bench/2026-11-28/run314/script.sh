#!/bin/bash
# run314 (a 4-GPU host, 4 ranks one per GPU, right after run 313): 4 channels were slower still
# (run 313), and Socket's 2 channels beat tcpxr's 2 at 1-4 MiB. NCCL's ring step there is one
# 512 KiB message, one tcpxr chunk moved by one I/O thread; Socket cuts it over its threads.
# Finer chunks (NCCL_TCPXR_CHUNK_BYTES 128K, 256K) against the default and Socket 2x2: all_reduce
# and all_gather 256 KiB-4 MiB, 100 iterations, --cycles 3, --repeat 2; then bulk all_reduce
# 32-256 MiB, 20 iterations, --repeat 2 (what finer chunks cost there). Host buffers.
cd "$(dirname "$0")/.."; A=/tmp/run314; source dist/common.sh
start_run; echo "c44: $(cat dist/c44/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c44 --mpirun --ranks 4 --ops all_reduce,all_gather --min 256K --max 4M --iters 100 --warmup 10 --timeout 60 --repeat 2 --cycles 3 \
  --configs tcpxr-host,tcpxr-host+k128,tcpxr-host+k256,socket-2x2 --variant k128:NCCL_TCPXR_CHUNK_BYTES=128K --variant k256:NCCL_TCPXR_CHUNK_BYTES=256K --out $A/m > $A/m.txt 2>&1
el "m rc=$? $(grep -c ' ok, ' $A/m.txt) ok, $(grep -c FAILED $A/m.txt) failed"
timeout 150 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c44 --mpirun --ranks 4 --ops all_reduce --min 32M --max 256M --iters 20 --warmup 3 --timeout 60 --repeat 2 \
  --configs tcpxr-host,tcpxr-host+k128,tcpxr-host+k256 --variant k128:NCCL_TCPXR_CHUNK_BYTES=128K --variant k256:NCCL_TCPXR_CHUNK_BYTES=256K --out $A/b > $A/b.txt 2>&1
el "b rc=$? $(grep -c ' ok, ' $A/b.txt) ok, $(grep -c FAILED $A/b.txt) failed"
rm -rf $A/m/r*/logs $A/b/r*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
