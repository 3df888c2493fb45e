#!/bin/bash
# run228 (a 4-GPU host, 64 cores; prepared 2026-11-27 in the twenty-fifth session): why the
# stripes' window costs sendrecv (run 226: 256 KiB made sendrecv 32-512 MiB 1.21-1.26x slower at 4
# ranks while all_gather gained up to 22 %). dist/w2 (the window's grant waits in
# NCCL_TCPXR_STATS): nccl-tests sendrecv and all_gather 16-512 MiB, 4 ranks one per GPU, 10
# iterations, NCCL_TCPXR_STATS=1, windows 0, 256K, 1M, 4M; each run's per-stripe lines (bytes,
# hand-offs and their wait, grant waits and their average, chunk times) stay in its logs/, and
# steps.txt sums grant waits a run. Then the same four windows in tcpxr-bench ring --channels 2
# --size 4M at 4 ranks (few stripes carrying much, sendrecv's shape). Hypothesis to test: a window
# caps how far a stripe's sender runs ahead of the receiver's reads, which NCCL's receiver makes
# only once it has posted; sendrecv's few stripes a peer (NCCL_NCHANNELS_PER_NET_PEER, 2 by
# default: 8 stripes) then hold less than NCCL keeps in flight (8 steps x 512 KiB a channel), while
# the collectives' 32 stripes do not. So also 256K with NCCL_NCHANNELS_PER_NET_PEER=4 and 8: if
# sendrecv recovers, the window should follow NCCL's depth per stripe. (tcpxr-bench posts its
# receives ahead, and there 256K was faster at 2 ranks x 2 channels x 4 MiB on the 2-core host:
# 5.6 GB/s against 3.2-3.7 with no window, with 49,000 grant waits of about 0.6 ms.)
cd "$(dirname "$0")/.."; A=/tmp/run228; source dist/common.sh
start_run
{ echo "new: $(cat dist/w2/commit.txt)"; } >> $A/machine.txt
tests_228
r(){ local out=$1 w=$2; shift 2
  timeout 150 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/w2 --mpirun --ranks 4 --ops sendrecv,all_gather --min 16M --max 512M --iters 10 --warmup 3 --timeout 60 --configs tcpxr-host --env NCCL_TCPXR_UNREAD_BYTES=$w --env NCCL_TCPXR_STATS=1 "$@" --out $A/$out > $A/$out.txt 2>&1
  el "$out rc=$? $(grep -c ' ok, ' $A/$out.txt) ok; grant waits $(cat $A/$out/logs/* 2>/dev/null | grep -o '[0-9]* grant waits avg [0-9.]* us' | awk '{n+=$1; t+=$1*$5} END{printf "%d avg %.1f us", n, n? t/n : 0}')"; }
for w in 0 256K 1M 4M; do r w$w $w; done
r w256K-p4 256K --env NCCL_NCHANNELS_PER_NET_PEER=4; r w256K-p8 256K --env NCCL_NCHANNELS_PER_NET_PEER=8
for w in 0 256K 1M 4M; do
  timeout 60 env NCCL_TCPXR_UNREAD_BYTES=$w dist/w2/tcpxr-bench ring --ranks 4 --channels 2 --size 4M --seconds 3 --no-baseline > $A/ring-$w.txt 2>&1
  el "ring 2ch 4M w$w rc=$? $(grep -a -E '^ +tcpxr +all' $A/ring-$w.txt | tr -s ' ')"
done
el done
