#!/bin/bash
# run333 (one H200, 16 cores; prepared in session 39, not run): the candidate tuner row
# (dist/exp-tree-ll.patch, dist/c50: a 4-rank all_reduce below a 2 KiB share runs the tree's LL
# where NCCL would run the ring's LL) against main (dist/c49 = ba328017, the same code as cafe3b4d):
#  tune3: NCCL's choices at 3 ranks for all_reduce 512 B-16 KiB, main and main with the old report
#         (NCCL_TCPXR_SPEED_MBPS=400000): does the 10 Gb/s report move the tree/ring switch there too?
#  tune4: NCCL's choices at 4 ranks for all_reduce 8 B-16 KiB on main, with NCCL_NTHREADS=256 (which
#         took the 8-64 B all_reduce from 45-48 us to 38-39 at 4 ranks one per GPU, run 323: by
#         another algorithm? the tree runs NCCL_MAX_NTHREADS whatever NCCL_NTHREADS says, enqueue.cc),
#         and under the candidate row (c50);
#  s4:    4 ranks on GPU 0 under MPS, all_reduce 8 B-16 KiB, c50 against c49, c49 with the ring
#         forced and with the tree forced (each size's time in either algorithm: where each wins),
#         and Socket default, 200 iterations, -N 3, three passes (run 329: 2 KiB 72.5 us on main
#         against 62.5 in the tree);
#  s3:    3 ranks, the same sizes, c49 against c49+old and Socket default, three passes;
#  checks on c50 (a tuner change): 3 and 4 ranks under MPS, host and GPU buffers, NCCL's choice,
#         Ring, Tree; 4 ranks with CUDA_DEVICE_MAX_CONNECTIONS=1; all_reduce, -c 1.
cd "$(dirname "$0")/.."; A=/tmp/run333; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c49: $(cat dist/c49/commit.txt); c50: $(cat dist/c50/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
OLD=old:NCCL_TCPXR_SPEED_MBPS=400000; NEW=row:NCCL_NET_PLUGIN=$PWD/dist/c50/libnccl-net-tcpxr.so
timeout 60 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c49 --one-gpu --mps --ranks 3 --ops all_reduce --min 512 --max 16K --iters 2 --warmup 1 --timeout 25 \
  --configs tcpxr-host,tcpxr-host+old --variant $OLD --env NCCL_DEBUG_SUBSYS=INIT,NET,TUNING --out $A/tune3 > $A/tune3.txt 2>&1
el "tune3 rc=$? $(grep -c ' ok, ' $A/tune3.txt) ok"
for c in tcpxr-host tcpxr-host+old; do grep -h "AllReduce:" $A/tune3/logs/all_reduce.$c.* | sed 's/^.*NCCL INFO //' | sort | uniq -c > $A/tune3-$c.txt; done
timeout 60 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c49 --one-gpu --mps --ranks 4 --ops all_reduce --min 8 --max 16K --iters 2 --warmup 1 --timeout 25 \
  --configs tcpxr-host,tcpxr-host+nt,tcpxr-host+row --variant nt:NCCL_NTHREADS=256 --variant $NEW --env NCCL_DEBUG_SUBSYS=INIT,NET,TUNING --out $A/tune4 > $A/tune4.txt 2>&1
el "tune4 rc=$? $(grep -c ' ok, ' $A/tune4.txt) ok"
for c in tcpxr-host tcpxr-host+nt tcpxr-host+row; do grep -h "AllReduce:" $A/tune4/logs/all_reduce.$c.* | sed 's/^.*NCCL INFO //' | sort | uniq -c > $A/tune4-$c.txt; done
rm -rf $A/tune3/logs $A/tune4/logs
timeout 220 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c49 --one-gpu --mps --ranks 4 --ops all_reduce --min 8 --max 16K --iters 200 --warmup 20 --cycles 3 --timeout 40 --repeat 3 \
  --configs tcpxr-host,tcpxr-host+row,tcpxr-host+ring,tcpxr-host+tree,socket --variant $NEW --variant ring:NCCL_ALGO=Ring --variant tree:NCCL_ALGO=Tree --out $A/s4 > $A/s4.txt 2>&1
el "s4 rc=$? $(grep -c ' ok, ' $A/s4.txt) ok, $(grep -c FAILED $A/s4.txt) failed"
timeout 150 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c49 --one-gpu --mps --ranks 3 --ops all_reduce --min 8 --max 16K --iters 200 --warmup 20 --cycles 3 --timeout 40 --repeat 3 \
  --configs tcpxr-host,tcpxr-host+old,socket --variant $OLD --out $A/s3 > $A/s3.txt 2>&1
el "s3 rc=$? $(grep -c ' ok, ' $A/s3.txt) ok, $(grep -c FAILED $A/s3.txt) failed"
checks dist/c50 all_reduce
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
