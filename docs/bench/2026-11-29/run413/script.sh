#!/bin/bash
# run413 (one H200, session 51): 2 ranks on GPU 0 under MPS, all_reduce of 256 KiB-2 MiB stands at
# 0.94-0.99 of Socket's best (run 410). The tuner runs a share of 16-256 KiB in the ring's Simple
# on 1 channel and 256 KiB-2 MiB on 2, rows measured one rank per GPU (runs 283, 316, 347). On one
# H200: main's head (dist/c89 = 5d516991) at its defaults, on 1 channel (NCCL_MAX_NCHANNELS=1), 2
# (MIN=MAX=2) and 4 (MIN=MAX=4; a user bound turns tcpxr's 8 built off and the tuner leaves the
# count to NCCL), against Socket default, 1x1 and 2x2 (4x4 never wins there, run 410). all_reduce
# 128 KiB-4 MiB, 100 iterations, -N 3, three passes rotated; TUNING log of pass 1.
cd "$(dirname "$0")/.."; A=/tmp/run413; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
timeout 420 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c89 --one-gpu --mps --ranks 2 --ops all_reduce --min 128K --max 4M --iters 100 --warmup 10 --cycles 3 --timeout 60 --repeat 3 \
  --configs tcpxr-host,tcpxr-host+ch1,tcpxr-host+ch2,tcpxr-host+ch4,socket,socket-1x1,socket-2x2 --env NCCL_DEBUG_SUBSYS=INIT,NET,TUNING \
  --variant ch1:NCCL_MAX_NCHANNELS=1 --variant ch2:NCCL_MIN_NCHANNELS=2 --variant ch2:NCCL_MAX_NCHANNELS=2 --variant ch4:NCCL_MIN_NCHANNELS=4 --variant ch4:NCCL_MAX_NCHANNELS=4 --out $A/ch > $A/ch.txt 2>&1
el "ch rc=$? $(grep -c ' ok, ' $A/ch.txt) ok, $(grep -c FAILED $A/ch.txt) failed"
for f in $A/ch/r1/logs/all_reduce.*; do echo "$f"; done | sed 's#.*/all_reduce\.\([^.]*\)\..*#\1#' | sort -u | while read c; do
  echo "$c: $(grep -h 'AllReduce:' $A/ch/r1/logs/all_reduce.$c.* | sed 's/^.*NCCL INFO //' | sort -u | head -40 | paste -sd';')"
done > $A/tuning.txt
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
