#!/bin/bash
# run341 (one H200, 16 cores; 4 ranks on GPU 0 under MPS): run 340's 8-64 B all_reduce gap is
# against Socket's default only, which runs no helper threads; Socket 1x1 and 2x2 take as long as
# tcpxr. Does tcpxr's I/O pool (2 threads a rank here) cost it, as helper threads seem to cost
# Socket? main with the row (dist/c52) at its defaults, without its pool (NCCL_TCPXR_IO_THREADS=0:
# NCCL's proxy thread moves everything) and without spinning (NCCL_TCPXR_IO_SPIN_US=0), against
# Socket default and 1x1; all_reduce 8 B-1 KiB, 200 iterations, -N 3, two passes alternated.
cd "$(dirname "$0")/.."; A=/tmp/run341; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c52: $(cat dist/c52/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c52 --one-gpu --mps --ranks 4 --ops all_reduce --min 8 --max 1K --iters 200 --warmup 20 --cycles 3 --timeout 40 --repeat 2 \
  --configs tcpxr-host,tcpxr-host+nopool,tcpxr-host+nospin,socket,socket-1x1 --variant nopool:NCCL_TCPXR_IO_THREADS=0 --variant nospin:NCCL_TCPXR_IO_SPIN_US=0 --out $A/pool > $A/pool.txt 2>&1
el "pool rc=$? $(grep -c ' ok, ' $A/pool.txt) ok, $(grep -c FAILED $A/pool.txt) failed"
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
