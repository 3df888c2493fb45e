#!/bin/bash
# run180 (a 4-GPU host, 64 cores), issue 31 items 2-3 at 2 and 4 ranks: the bulk ceiling in NCCL's
# own shape, in the same run as NCCL. (1) tcpxr-bench ring (84c5343: --channels,
# --tcp-connections; its library code is 7e10a21's) at 4 and 2 ranks, 8 channels each way as tcpxr
# has NCCL build at bulk, 512 KiB and 4 MiB messages, 8 in flight a channel, 3 s, beside plain TCP
# rings of 4, 8, 16 and 32 connections a rank each way (the best is the ceiling). (2) nccl-tests
# all_reduce, all_gather, reduce_scatter, sendrecv 8-512 MiB, 20 iterations, -c 1, Socket
# default/1x1/2x2/4x4 and tcpxr host buffers (dist/new, 6afb4c4's library = HEAD's code), through
# run_nccl_tests.py --mpirun at 4 ranks (GPUs 0-3) and at 2 ranks (GPUs 0-1), with cores busy.
cd "$(dirname "$0")/.."; A=/tmp/run180; source dist/common.sh
start_run
cat dist/new/commit.txt >> $A/machine.txt
tests_228
for n in 4 2; do for s in 512K 4M; do
  timeout 90 dist/new/tcpxr-bench ring --ranks $n --channels 8 --size $s --seconds 3 --tcp-connections 4,8,16,32 > $A/ring-$n-$s.txt 2> $A/ring-$n-$s.err
  el "ring $n ranks $s rc=$? $(grep -a -E '^ +(tcpxr|tcp x[0-9]+) +all' $A/ring-$n-$s.txt | awk '{printf "%s%s:%s/%s ", $1, ($1=="tcp"?$2:""), ($1=="tcp"?$4:$3), ($1=="tcp"?$7:$6)}') | $(grep -a '^ceiling' $A/ring-$n-$s.txt)"
done; done
for n in 4 2; do
  timeout 260 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/new --mpirun --ranks $n --configs socket,socket-1x1,socket-2x2,socket-4x4,tcpxr-host --ops all_reduce,all_gather,reduce_scatter,sendrecv --min 8M --max 512M --iters 20 --warmup 5 --timeout 60 --out $A/bulk$n > $A/bulk$n.txt 2>&1
  el "bulk $n ranks rc=$? $(grep -c ' ok, ' $A/bulk$n.txt) ok, $(grep -c FAILED $A/bulk$n.txt) failed"
done
{ uptime; } >> $A/machine.txt 2>&1
el done
