#!/bin/bash
# run255 (a 4-GPU host; 2026-11-27, twenty-ninth session): run 254 found tcpxr's bulk all_gather
# at 4 ranks one per GPU at 62-83 ms for 512 MiB where run 213 (a2215065) had 33, Socket 1.25-1.6x
# slower too. Code or instance? On one instance, alternated twice: c17 (main, 56e8f4b) against
# c18 (a2215065, run 213's build), and c17 with NCCL_TCPXR_STATS=0 (run_nccl_tests.py turns the
# counters on, which since df2f27b9 time every socket call): all_gather, all_reduce 16-512 MiB,
# 4 ranks one per GPU, host buffers, 20 iterations, -c 1. (Run as p1/new, p1/old, p2/...; the record's
# folders were renamed new/r1, old/r1, new/r2, ... so that compact.py show 255 --median pairs them.)
cd "$(dirname "$0")/.."; A=/tmp/run255; source dist/common.sh
start_run
{ echo "c17: $(cat dist/c17/commit.txt)"; echo "c18: $(cat dist/c18/commit.txt)"; } >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
r(){ local out=$1 lib=$2; shift 2
  timeout 120 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir $lib --mpirun --ranks 4 --ops all_gather,all_reduce --min 16M --max 512M --iters 20 --warmup 5 --timeout 60 --out $A/$out "$@" > $A/$out.txt 2>&1
  el "$out rc=$? $(grep -c ' ok, ' $A/$out.txt) ok; $(awk '/^ +536870912 /{printf "%s ", $6}' $A/$out/*.tcpxr-host*.txt)"; }
for p in 1 2; do mkdir -p $A/p$p
  r p$p/new dist/c17 --configs tcpxr-host,tcpxr-host+nostats --variant nostats:NCCL_TCPXR_STATS=0
  r p$p/old dist/c18 --configs tcpxr-host
done
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
