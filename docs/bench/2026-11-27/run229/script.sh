#!/bin/bash
# run229 (a 4-GPU host, 64 cores; 2026-11-27, twenty-sixth session): a window that grows while the
# sender waits on it (NCCL_TCPXR_UNREAD_MAX_BYTES, dist/w3). Run 228 found sendrecv at 4 ranks
# 15 % slower with a fixed 256 KiB window and faster with 4 channels a peer (16 stripes): the
# window a stripe was short for the few stripes sendrecv has. Here: nccl-tests sendrecv,
# all_gather and all_reduce 1-512 MiB, 4 ranks one per GPU, 10 iterations, NCCL_TCPXR_STATS=1,
# configs none / 256K fixed / 256K growing to 1M / 256K growing to 4M in the order A B C D D C B A;
# then tcpxr-bench ring 8 channels x 512 KiB and 2 channels x 4 MiB per config (A B C D D C B A);
# then no window with NCCL_NCHANNELS_PER_NET_PEER=4 (run 228's missing control).
# dist/w3: built from 197dd744, a working commit whose code became 89b66c2 (whose tests and
# comments came after the run; the code is the same).
cd "$(dirname "$0")/.."; A=/tmp/run229; source dist/common.sh
start_run
{ echo "new: $(cat dist/w3/commit.txt)"; } >> $A/machine.txt
tests_228
declare -A LO=([none]=0 [f256K]=256K [g1M]=256K [g4M]=256K) HI=([none]=0 [f256K]=0 [g1M]=1M [g4M]=4M)
r(){ local out=$1 c=$2; shift 2
  timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/w3 --mpirun --ranks 4 --ops sendrecv,all_gather,all_reduce --min 1M --max 512M --iters 10 --warmup 3 --timeout 60 --configs tcpxr-host --env NCCL_TCPXR_UNREAD_BYTES=${LO[$c]} --env NCCL_TCPXR_UNREAD_MAX_BYTES=${HI[$c]} --env NCCL_TCPXR_STATS=1 "$@" --out $A/$out > $A/$out.txt 2>&1
  el "$out rc=$? $(grep -c ' ok, ' $A/$out.txt) ok; grant waits $(cat $A/$out/logs/* 2>/dev/null | grep -o '[0-9]* grant waits avg [0-9.]* us' | awk '{n+=$1; t+=$1*$5} END{printf "%d avg %.1f us", n, n? t/n : 0}'); growths $(cat $A/$out/logs/* 2>/dev/null | grep -o 'window grew [0-9]* times' | awk '{n+=$3} END{print n+0}')"; }
ORDER="none f256K g1M g4M g4M g1M f256K none"; i=0
for c in $ORDER; do i=$((i+1)); r n$i-$c $c; done
i=0
for c in $ORDER; do i=$((i+1))
  for shape in "8 512K" "2 4M"; do set -- $shape
    timeout 60 env NCCL_TCPXR_UNREAD_BYTES=${LO[$c]} NCCL_TCPXR_UNREAD_MAX_BYTES=${HI[$c]} dist/w3/tcpxr-bench ring --ranks 4 --channels $1 --size $2 --seconds 3 --no-baseline > $A/ring$i-$c-$1ch.txt 2>&1
    el "ring $i $c ${1}ch $2 rc=$? $(grep -a -E '^ +tcpxr +all' $A/ring$i-$c-$1ch.txt | tr -s ' ')"
  done
done
r p4-none none --env NCCL_NCHANNELS_PER_NET_PEER=4
el done
