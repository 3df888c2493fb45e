#!/bin/bash
# run309 (a 4-GPU host, one rank per GPU): with the ring's LL for 2-16 KiB shares (dist/c42) every
# all_reduce size the tree kept (8 B-4 KiB) took 6-9 % longer than main's (dist/c41) in the steady
# state (nccl-tests -N, runs 305 and 307), alike in the first cycle. Does Socket's tree pay the
# same for the ring it runs at 2-64 KiB? Each with and without NCCL_ALGO=Tree (the tree at every
# size: no ring in the process), all_reduce 8 B-64 KiB, 200 iterations, --cycles 20 (steady
# state), --repeat 3, host buffers, 4 ranks then 3.
cd "$(dirname "$0")/.."; A=/tmp/run309; source dist/common.sh
start_run; for c in c41 c42; do echo "$c: $(cat dist/$c/commit.txt)"; done >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
C42=NCCL_NET_PLUGIN=$PWD/dist/c42/libnccl-net-tcpxr.so
for np in 4 3; do
  CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((np-1))) timeout 250 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c41 --mpirun --ranks $np --ops all_reduce --min 8 --max 64K --iters 200 --warmup 20 --timeout 60 --repeat 3 --cycles 20 \
    --configs tcpxr-host,tcpxr-host+tree,tcpxr-host+row,socket,socket+tree --variant tree:NCCL_ALGO=Tree --variant row:$C42 --out $A/r$np > $A/r$np.txt 2>&1
  el "r$np rc=$? $(grep -c ' ok, ' $A/r$np.txt) ok, $(grep -c FAILED $A/r$np.txt) failed"
  rm -rf $A/r$np/r*/logs
done
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
