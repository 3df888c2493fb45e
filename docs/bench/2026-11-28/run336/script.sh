#!/bin/bash
# run336 (any lent machine; GPU 0 only): the tuner row as it lands (dist/c52 = 8416ff46: an
# all_reduce below a 2 KiB share on 3-4 ranks runs the tree's LL where NCCL would run the ring's
# LL; run 333 measured it on 4 ranks as dist/c50, and on 3 ranks through the old 400 Gb/s report)
# against main (dist/c49):
#  tune3: NCCL's choices at 3 ranks for all_reduce 512 B-16 KiB under c52;
#  s3:    3 ranks on GPU 0 under MPS, all_reduce 8 B-16 KiB, c52 against c49 and Socket default,
#         200 iterations, -N 3, three passes;
#  checks on c52 (a tuner change): 3 and 4 ranks under MPS, host and GPU buffers, NCCL's choice,
#         Ring, Tree; 4 ranks with CUDA_DEVICE_MAX_CONNECTIONS=1; all_reduce, -c 1.
cd "$(dirname "$0")/.."; A=/tmp/run336; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c49: $(cat dist/c49/commit.txt); c52: $(cat dist/c52/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
NEW=row:NCCL_NET_PLUGIN=$PWD/dist/c52/libnccl-net-tcpxr.so
timeout 60 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c49 --one-gpu --mps --ranks 3 --ops all_reduce --min 512 --max 16K --iters 2 --warmup 1 --timeout 25 \
  --configs tcpxr-host+row --variant $NEW --env NCCL_DEBUG_SUBSYS=INIT,NET,TUNING --out $A/tune3 > $A/tune3.txt 2>&1
el "tune3 rc=$? $(grep -c ' ok, ' $A/tune3.txt) ok"
grep -h "AllReduce:" $A/tune3/logs/all_reduce.tcpxr-host+row.* | sed 's/^.*NCCL INFO //' | sort | uniq -c > $A/tune3-tcpxr-host+row.txt
rm -rf $A/tune3/logs
timeout 150 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c49 --one-gpu --mps --ranks 3 --ops all_reduce --min 8 --max 16K --iters 200 --warmup 20 --cycles 3 --timeout 40 --repeat 3 \
  --configs tcpxr-host,tcpxr-host+row,socket --variant $NEW --out $A/s3 > $A/s3.txt 2>&1
el "s3 rc=$? $(grep -c ' ok, ' $A/s3.txt) ok, $(grep -c FAILED $A/s3.txt) failed"
checks dist/c52 all_reduce
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
