#!/bin/bash
# run379 (2x H200, session 47): issue 31 item 4 at 2 ranks one per GPU, main's head (dist/c73).
#  1. Per copy or per byte? sendrecv 8-128 MiB, tcpxr-host, tcpxr-gpu and both +c2:
#     NCCL_P2P_NET_CHUNKSIZE=2097152 with NCCL_BUFFSIZE=16777216 (run 378 set the chunk alone and
#     NCCL kept 512 KiB messages: a p2p message is at most NCCL_BUFFSIZE / 8 steps). With +c2 each
#     receive, and so each copy-engine placement, is 4x larger and 4x fewer: the counters line's
#     copy count must fall 4x, or the variant is void again.
#  2. all_reduce 8-128 MiB, tcpxr-host against tcpxr-gpu, the item as run 339 measured it.
#  20 iterations, -N 2 (--cycles 2), three passes alternated.
cd "$(dirname "$0")/.."; A=/tmp/run379; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0,1; echo "c73: $(cat dist/c73/commit.txt)" >> $A/machine.txt
build_tests_in /tmp/nt-2.28.3 /usr 32; NT=/tmp/nt-2.28.3/build
timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c73 --mpirun --ranks 2 --ops sendrecv \
  --configs tcpxr-host,tcpxr-gpu,tcpxr-host+c2,tcpxr-gpu+c2 --variant c2:NCCL_P2P_NET_CHUNKSIZE=2097152 --variant c2:NCCL_BUFFSIZE=16777216 \
  --min 8M --max 128M --iters 20 --warmup 3 --cycles 2 --repeat 3 --timeout 60 --out $A/c2 > $A/c2.txt 2>&1
el "c2 rc=$? $(grep -c ' ok, ' $A/c2.txt) ok, $(grep -c FAILED $A/c2.txt) failed"
grep -o 'sendrecv tcpxr-gpu[+c2]*: [^|]*copies into GPU memory[^|]*' $A/c2/summary.md | sed 's/send:.*copies/copies/' | tee -a $A/steps.txt
timeout 150 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c73 --mpirun --ranks 2 --ops all_reduce \
  --configs tcpxr-host,tcpxr-gpu --min 8M --max 128M --iters 20 --warmup 3 --cycles 2 --repeat 3 --timeout 60 --out $A/ar > $A/ar.txt 2>&1
el "ar rc=$? $(grep -c ' ok, ' $A/ar.txt) ok, $(grep -c FAILED $A/ar.txt) failed"
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
