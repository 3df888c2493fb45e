#!/bin/bash
# run417 (one H200, session 51), main's head dist/c89 = 5d516991:
#  ring: item 3 at 2 ranks on this machine (no row yet): tcpxr-bench ring, 2 processes on the 16
#        cores, tcpxr on 8 channels (NCCL's bulk) at 512 KiB (NCCL's step) and on 4 channels at
#        4 MiB, beside plain TCP with 1, 2, 4 and 8 connections a rank; each with tcpxr's defaults
#        and with the growing window (NCCL_TCPXR_UNREAD_BYTES=256K NCCL_TCPXR_UNREAD_MAX_BYTES=4M,
#        which brought tcpxr's ring above plain TCP x1 on the 2-core CPU host, 2026-11-29).
#  win:  the window in NCCL at 2 ranks on GPU 0 under MPS, host buffers: the three collectives and
#        sendrecv 8-256 MiB, 10 iterations, two passes rotated, against Socket 1x1 and 2x2.
cd "$(dirname "$0")/.."; A=/tmp/run417; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0
W="NCCL_TCPXR_UNREAD_BYTES=262144 NCCL_TCPXR_UNREAD_MAX_BYTES=4194304"
for v in default window; do for cs in 8:512K 4:4M; do
  e=(); [ $v = window ] && e=($W)
  timeout 120 env "${e[@]}" dist/c89/tcpxr-bench ring --ranks 2 --channels ${cs%:*} --size ${cs#*:} --seconds 3 --tcp-connections 1,2,4,8 > $A/ring-$v-${cs/:/-}.txt 2>&1
  el "ring $v ${cs} rc=$? $(grep -a -E '^ +(tcpxr|tcp x[0-9]+) +all' $A/ring-$v-${cs/:/-}.txt | tr -s ' ' | paste -sd';')"
done; done
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
timeout 330 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c89 --one-gpu --mps --ranks 2 --ops all_reduce,all_gather,reduce_scatter,sendrecv --min 8M --max 256M --iters 10 --warmup 3 --timeout 60 --repeat 2 \
  --configs tcpxr-host,tcpxr-host+win,socket-1x1,socket-2x2 --variant win:NCCL_TCPXR_UNREAD_BYTES=262144 --variant win:NCCL_TCPXR_UNREAD_MAX_BYTES=4194304 --out $A/win > $A/win.txt 2>&1
el "win rc=$? $(grep -c ' ok, ' $A/win.txt) ok, $(grep -c FAILED $A/win.txt) failed"
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
