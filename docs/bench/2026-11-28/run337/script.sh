#!/bin/bash
# run337 (2x H200, 32 cores; 2 ranks one per GPU), main's library dist/c49 = ba328017 (the code of
# every later commit but the tree's LL row, which these sizes and ranks do not reach):
#  built: the one-step collectives' 2-3 us gap at 32-128 B (all_gather, reduce_scatter: the ring's
#         LL on channel 0 over both transports, run 335). NCCL builds Socket 2 channels and tcpxr 8
#         (NCCL_MIN_NCHANNELS=8, nccl_settings), and run 208 found Socket on 8 built 1-3 us slower
#         at one channel used: tcpxr with 2 built (NCCL_MAX_NCHANNELS=2, so tcpxr sets no minimum)
#         and Socket with 8 (NCCL_MIN_NCHANNELS=8) beside the defaults, 8 B-1 KiB, 200 iterations,
#         -N 3, three passes; the channels each built, from the INIT log.
#  ring:  item 3 at 2 ranks again (run 209 was e4db58c): tcpxr-bench ring over 8 channels, 512 KiB
#         and 4 MiB, beside plain TCP with 1, 2, 4, 8 and 16 connections a rank.
cd "$(dirname "$0")/.."; A=/tmp/run337; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0,1; echo "c49: $(cat dist/c49/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
timeout 260 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c49 --mpirun --ranks 2 --ops all_gather,reduce_scatter --min 8 --max 1K --iters 200 --warmup 20 --cycles 3 --timeout 30 --repeat 3 \
  --configs tcpxr-host,tcpxr-host+c2,socket,socket+c8 --variant c2:NCCL_MAX_NCHANNELS=2 --variant c8:NCCL_MIN_NCHANNELS=8 --out $A/built > $A/built.txt 2>&1
el "built rc=$? $(grep -c ' ok, ' $A/built.txt) ok, $(grep -c FAILED $A/built.txt) failed"
for c in tcpxr-host tcpxr-host+c2 socket socket+c8; do
  el "channels built, $c: $(cat $A/built/r1/logs/all_gather.$c.* 2>/dev/null | grep -a -o 'Channel [0-9]*/[0-9]*' | sed 's|.*/||' | sort -u | paste -sd,)"
done
for s in 512K 4M; do
  timeout 100 dist/c49/tcpxr-bench ring --ranks 2 --channels 8 --size $s --seconds 3 --tcp-connections 1,2,4,8,16 > $A/ring-$s.txt 2>&1
  el "ring $s rc=$? $(grep -a -E '^ +(tcpxr|tcp x[0-9]+) +all' $A/ring-$s.txt | tr -s ' ' | paste -sd';')"
done
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
