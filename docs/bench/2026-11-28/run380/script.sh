#!/bin/bash
# run380 (2x H200, session 47): two experiments on GPU buffers' sendrecv gap at 2 ranks one per
# GPU (run 379: 1.10-1.19x host buffers' time at 16-128 MiB, per byte). dist/c74 = main ef94fc1b +
# dist/exp-wrap-streams.patch:
#  +wrap: TCPXR_EXP_BOUNCE_WRAP=1: a comm's bounce ring starts over at 0 as soon as that is free, so
#         the span it writes stays near what is in flight (about 4.5 MiB a comm) instead of its whole
#         16 MiB section (64 MiB a rank over 4 channels, against NCCL's 16 MiB of host buffers): do
#         the I/O threads' writes, and the copy engine's reads, find the lines in the shared cache?
#  +s2:   TCPXR_EXP_COPY_STREAMS=2: a comm's copies alternate over two streams (run 245 found more
#         streams slower with 2 ranks sharing one GPU; never measured one rank per GPU).
#  1. sendrecv 8-128 MiB: tcpxr-host, tcpxr-gpu, +wrap, +s2.  2. all_reduce 8-128 MiB: tcpxr-host,
#     tcpxr-gpu, +wrap (wrap acts on every comm's bounce memory).
#  20 iterations, -N 2, three passes alternated, -c 1.
cd "$(dirname "$0")/.."; A=/tmp/run380; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0,1; echo "c74: $(cat dist/c74/commit.txt)" >> $A/machine.txt
build_tests_in /tmp/nt-2.28.3 /usr 32; NT=/tmp/nt-2.28.3/build
V=(--variant wrap:TCPXR_EXP_BOUNCE_WRAP=1 --variant s2:TCPXR_EXP_COPY_STREAMS=2)
timeout 240 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c74 --mpirun --ranks 2 --ops sendrecv \
  --configs tcpxr-host,tcpxr-gpu,tcpxr-gpu+wrap,tcpxr-gpu+s2 "${V[@]}" \
  --min 8M --max 128M --iters 20 --warmup 3 --cycles 2 --repeat 3 --timeout 60 --out $A/sr > $A/sr.txt 2>&1
el "sr rc=$? $(grep -c ' ok, ' $A/sr.txt) ok, $(grep -c FAILED $A/sr.txt) failed"
grep -o 'sendrecv tcpxr-gpu[+a-z0-9]*: [^|]*copies into GPU memory[^|]*' $A/sr/summary.md | sed 's/send:.*copies/copies/' | tee -a $A/steps.txt
grep 'CPU cores busy' $A/sr/summary.md | tee -a $A/steps.txt
timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c74 --mpirun --ranks 2 --ops all_reduce \
  --configs tcpxr-host,tcpxr-gpu,tcpxr-gpu+wrap "${V[@]}" --min 8M --max 128M --iters 20 --warmup 3 --cycles 2 --repeat 3 --timeout 60 --out $A/ar > $A/ar.txt 2>&1
el "ar rc=$? $(grep -c ' ok, ' $A/ar.txt) ok, $(grep -c FAILED $A/ar.txt) failed"
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
