#!/bin/bash
# run233 (a 4-GPU host, 64 cores; 2026-11-27, twenty-sixth session): the growing window against
# none by medians, as runs 230 and 232 disagreed at 2 ranks: three runs of each, in the order
# A B B A A B (one run_nccl_tests.py call each, as --env applies to every config of a call), each
# size's median of three; all_reduce, reduce_scatter, sendrecv 16-512 MiB, 10 iterations;
# tcpxr-host with no window and with 256 KiB growing to 4 MiB. 2 ranks (GPUs 0-1), then 4 ranks.
# dist/w3: built from 197dd744, a working commit whose code became 89b66c2.
cd "$(dirname "$0")/.."; A=/tmp/run233; source dist/common.sh
start_run
{ echo "new: $(cat dist/w3/commit.txt)"; } >> $A/machine.txt
tests_228
declare -A LO=([none]=0 [g4M]=256K) HI=([none]=0 [g4M]=4M)
r(){ local out=$1 c=$2 np=$3
  timeout 120 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/w3 --mpirun --ranks $np --ops all_reduce,reduce_scatter,sendrecv --min 16M --max 512M --iters 10 --warmup 3 --timeout 60 --configs tcpxr-host --env NCCL_TCPXR_UNREAD_BYTES=${LO[$c]} --env NCCL_TCPXR_UNREAD_MAX_BYTES=${HI[$c]} --out $A/$out > $A/$out.txt 2>&1
  el "$out rc=$? $(grep -c ' ok, ' $A/$out.txt) ok"; }
for np in 2 4; do
  p=0; for c in none g4M g4M none none g4M; do p=$((p+1)); r r$np-$p-$c $c $np; done
done
el done
