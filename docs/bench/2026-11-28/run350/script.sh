#!/bin/bash
# run350 (2x H200, 32 cores; prepared in session 41, not run): the one band place below 1.0 at 2
# ranks one per GPU against all four Socket tunings, all_reduce of 1-2 MiB (0.85-0.93 in run 346;
# more channels slower, run 347), by tcpxr's own knobs on the tuner's 2 channels: 2 or 8 stripes
# a connection instead of 4, 256 KiB chunks instead of 512, 16 I/O threads instead of the auto
# 10. main's head (dist/c53), all_reduce 512 KiB-4 MiB, 40 iterations, -N 3, three passes
# alternated, against Socket 1x1 and 2x2 (the two that win there, run 346).
cd "$(dirname "$0")/.."; A=/tmp/run350; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0,1; echo "c53: $(cat dist/c53/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
timeout 420 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c53 --mpirun --ranks 2 --ops all_reduce --min 512K --max 4M --iters 40 --warmup 10 --cycles 3 --timeout 40 --repeat 3 \
  --configs tcpxr-host,tcpxr-host+s2,tcpxr-host+s8,tcpxr-host+c256,tcpxr-host+io16,socket-1x1,socket-2x2 \
  --variant s2:NCCL_TCPXR_STRIPES=2 --variant s8:NCCL_TCPXR_STRIPES=8 --variant c256:NCCL_TCPXR_CHUNK_BYTES=256K --variant io16:NCCL_TCPXR_IO_THREADS=16 --out $A/knobs > $A/knobs.txt 2>&1
el "knobs rc=$? $(grep -c ' ok, ' $A/knobs.txt) ok, $(grep -c FAILED $A/knobs.txt) failed"
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
