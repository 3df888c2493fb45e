#!/bin/bash
# run377 (one H200, 16 cores, session 46): do GPU buffers slow down within a process? In run 371
# (4 ranks one per GPU) two of three passes had GPU buffers' sendrecv take 1.15-1.61x longer in
# the second cycle than in the first, host buffers' not. Here: 2 ranks on GPU 0 under MPS, main's
# library (dist/c72), sendrecv 8-128 MiB, tcpxr-host against tcpxr-gpu, 20 iterations, three
# cycles (-N 3) a process, three passes alternated; the runner's counters line has the copy
# engine's queued-to-done times per run.
cd "$(dirname "$0")/.."; A=/tmp/run377; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c72: $(cat dist/c72/commit.txt)" >> $A/machine.txt
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c72 --one-gpu --mps --ranks 2 --ops sendrecv --configs tcpxr-host,tcpxr-gpu \
  --min 8M --max 128M --iters 20 --warmup 3 --cycles 3 --repeat 3 --timeout 60 --out $A/drift > $A/drift.txt 2>&1
el "drift rc=$? $(grep -c ' ok, ' $A/drift.txt) ok, $(grep -c FAILED $A/drift.txt) failed"
grep -o 'sendrecv tcpxr-gpu: [^|]*copies into GPU memory[^|]*' $A/drift/summary.md | sed 's/send:.*copies/copies/' | tee -a $A/steps.txt
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
