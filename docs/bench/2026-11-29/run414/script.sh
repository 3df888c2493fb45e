#!/bin/bash
# run414 (one H200, session 51): item 2 at 2 ranks on GPU 0 under MPS, all_reduce of 8-16 MiB at
# 1.33-1.47 of Socket's best (run 406; 1.5 wanted). The tuner keeps shares below 32 MiB on at most
# the 4 channels NCCL builds by itself (a row measured one rank per GPU, run 283). Here: main's
# head (dist/c89 = 5d516991); dist/c90 = c89 with an all_reduce row for shares of 1-32 MiB that
# lifts the cap (NCCL's own count over the 8 built; dist/c90/exp-built8.patch); c89 with NCCL's
# buffer at 2 MiB and 8 MiB (NCCL_BUFFSIZE; 4 MiB by default: 512 KiB steps); against Socket 1x1
# and 2x2 (the two that win there). all_reduce 2-64 MiB, 50 iterations, -N 3, three passes
# rotated; TUNING log of pass 1.
cd "$(dirname "$0")/.."; A=/tmp/run414; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c90: $(cat dist/c90/commit.txt)" >> $A/machine.txt
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
timeout 480 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c89 --one-gpu --mps --ranks 2 --ops all_reduce --min 2M --max 64M --iters 50 --warmup 5 --cycles 3 --timeout 60 --repeat 3 \
  --configs tcpxr-host,tcpxr-host+built8,tcpxr-host+buf2m,tcpxr-host+buf8m,socket-1x1,socket-2x2 --env NCCL_DEBUG_SUBSYS=INIT,NET,TUNING \
  --variant built8:NCCL_NET_PLUGIN=$PWD/dist/c90/libnccl-net-tcpxr.so --variant buf2m:NCCL_BUFFSIZE=2097152 --variant buf8m:NCCL_BUFFSIZE=8388608 --out $A/bulk > $A/bulk.txt 2>&1
el "bulk rc=$? $(grep -c ' ok, ' $A/bulk.txt) ok, $(grep -c FAILED $A/bulk.txt) failed"
for f in $A/bulk/r1/logs/all_reduce.*; do echo "$f"; done | sed 's#.*/all_reduce\.\([^.]*\)\..*#\1#' | sort -u | while read c; do
  echo "$c: $(grep -h 'AllReduce:' $A/bulk/r1/logs/all_reduce.$c.* | sed 's/^.*NCCL INFO //' | sort -u | head -40 | paste -sd';')"
done > $A/tuning.txt
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
