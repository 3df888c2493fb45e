#!/bin/bash
# run378 (one H200, 16 cores, session 46): GPU buffers' sendrecv gap to host buffers, per copy or
# per byte? NCCL_P2P_NET_CHUNKSIZE=2097152 (+c2; tcpxr sets 512 KiB when unset) makes each
# point-to-point receive, and so each copy-engine placement, 4x larger and 4x fewer. If GPU / host
# time narrows with it, fixed costs per copy (driver calls, event polls on NCCL's thread, the
# queue-to-done wait) make the gap; if not, the cost is per byte. 2 ranks on GPU 0 under MPS (run
# 377's shape), main's library (dist/c72), sendrecv 8-128 MiB, tcpxr-host, tcpxr-gpu and both +c2,
# 20 iterations, -N 2, three passes alternated; the runner's counters line has the copies' times.
cd "$(dirname "$0")/.."; A=/tmp/run378; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c72: $(cat dist/c72/commit.txt)" >> $A/machine.txt
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c72 --one-gpu --mps --ranks 2 --ops sendrecv \
  --configs tcpxr-host,tcpxr-gpu,tcpxr-host+c2,tcpxr-gpu+c2 --variant c2:NCCL_P2P_NET_CHUNKSIZE=2097152 \
  --min 8M --max 128M --iters 20 --warmup 3 --cycles 2 --repeat 3 --timeout 60 --out $A/c2 > $A/c2.txt 2>&1
el "c2 rc=$? $(grep -c ' ok, ' $A/c2.txt) ok, $(grep -c FAILED $A/c2.txt) failed"
grep -o 'sendrecv tcpxr-gpu[+c2]*: [^|]*copies into GPU memory[^|]*' $A/c2/summary.md | sed 's/send:.*copies/copies/' | tee -a $A/steps.txt
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
