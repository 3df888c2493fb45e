#!/bin/bash
# run232 (a 4-GPU host, 64 cores; 2026-11-27, twenty-sixth session): why a window costs 2 ranks
# (run 230: 256 KiB growing to 4 MiB took sendrecv 32-512 MiB 1.08-1.22x and reduce_scatter
# 8-128 MiB 1.11-1.15x the time without). 2 ranks one per GPU (GPUs 0-1), sendrecv and
# reduce_scatter 16-512 MiB, 10 iterations, NCCL_TCPXR_STATS=1: no window, fixed 256 KiB, 256 KiB
# growing to 4 MiB, in the order A B C C B A; steps.txt sums each run's grant waits (count,
# average) and window growths, and the hand-offs' average wait. dist/w3 (89b66c2's code).
# dist/w3: built from 197dd744, a working commit whose code became 89b66c2.
cd "$(dirname "$0")/.."; A=/tmp/run232; source dist/common.sh
start_run
{ echo "new: $(cat dist/w3/commit.txt)"; } >> $A/machine.txt
tests_228
declare -A LO=([none]=0 [f256K]=256K [g4M]=256K) HI=([none]=0 [f256K]=0 [g4M]=4M)
r(){ local out=$1 c=$2
  timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/w3 --mpirun --ranks 2 --ops sendrecv,reduce_scatter --min 16M --max 512M --iters 10 --warmup 3 --timeout 80 --configs tcpxr-host --env NCCL_TCPXR_UNREAD_BYTES=${LO[$c]} --env NCCL_TCPXR_UNREAD_MAX_BYTES=${HI[$c]} --env NCCL_TCPXR_STATS=1 --out $A/$out > $A/$out.txt 2>&1
  local rc=$? logs="$A/$out/logs/*"
  el "$out rc=$rc $(grep -c ' ok, ' $A/$out.txt) ok; grant waits $(cat $logs 2>/dev/null | grep -o '[0-9]* grant waits avg [0-9.]* us' | awk '{n+=$1; t+=$1*$5} END{printf "%d avg %.1f us", n, n? t/n : 0}'); growths $(cat $logs 2>/dev/null | grep -o 'window grew [0-9]* times' | awk '{n+=$3} END{print n+0}'); hand-offs $(cat $logs 2>/dev/null | grep -o '[0-9]* hand-offs waited avg [0-9.]* us' | awk '{n+=$1; t+=$1*$5} END{printf "%d avg %.1f us", n, n? t/n : 0}')"; }
i=0; for c in none f256K g4M g4M f256K none; do i=$((i+1)); r n$i-$c $c; done
el done
