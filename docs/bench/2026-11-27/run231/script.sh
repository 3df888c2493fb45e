#!/bin/bash
# run231 (a 4-GPU host, 64 cores; 2026-11-27, twenty-sixth session): where tcpxr stands against
# NCCL Socket's four tunings at 4 ranks one per GPU, with the default (no window) and with the
# growing window (NCCL_TCPXR_UNREAD_BYTES=256K NCCL_TCPXR_UNREAD_MAX_BYTES=4M), 1-512 MiB, the four
# collectives, 10 iterations. dist/w3 (89b66c2's code; see run229/script.sh). Order: Socket's four
# and the default (one run_nccl_tests.py call: each op's configs in turn), then the growing
# window, then the default again (the instance's drift).
# dist/w3: built from 197dd744, a working commit whose code became 89b66c2.
cd "$(dirname "$0")/.."; A=/tmp/run231; source dist/common.sh
start_run
{ echo "new: $(cat dist/w3/commit.txt)"; } >> $A/machine.txt
tests_228
r(){ local out=$1 cfgs=$2; shift 2
  timeout 400 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/w3 --mpirun --ranks 4 --ops all_reduce,all_gather,reduce_scatter,sendrecv --min 1M --max 512M --iters 10 --warmup 3 --timeout 80 --configs $cfgs "$@" --out $A/$out > $A/$out.txt 2>&1
  el "$out rc=$? $(grep -c ' ok, ' $A/$out.txt) ok"; }
r s1 socket,socket-1x1,socket-2x2,socket-4x4,tcpxr-host
r g1 tcpxr-host --env NCCL_TCPXR_UNREAD_BYTES=256K --env NCCL_TCPXR_UNREAD_MAX_BYTES=4M
r d2 tcpxr-host
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
