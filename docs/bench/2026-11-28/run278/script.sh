#!/bin/bash
# run278 (2026-11-28, thirty-first session; a 2-GPU host): e16543bc, where NCCL's device unpack's
# bounce receives are demoted (ef86f48f demoted only tcpxr's own unpack path). dist/c28.
# The copy-in GPU test by default, one queue, MPS; 2 ranks one per GPU sendrecv 8-512 MiB, GPU
# buffers demote on and off, two passes, with the copy counters (run 272's experiment, which
# demoted every read, took the copies' wait from 120-131 to 63 us); then the 3-4-rank
# correctness set (dist/common.sh checks).
cd "$(dirname "$0")/.."; A=/tmp/run278; source dist/common.sh
start_run; echo "c28: $(cat dist/c28/commit.txt)" >> $A/machine.txt
grep -o -w cldemote /proc/cpuinfo | sort | uniq -c >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
L=dist/c28
export TCPXR_REQUIRE_GPU=1 TCPXR_BENCH=$PWD/$L/tcpxr-bench; t=gpu_copy_in
CUDA_VISIBLE_DEVICES=0 timeout 60 $L/deps/$t --include-ignored --test-threads=1 > $A/$t-default.txt 2>&1; el "$t default rc=$? $(grep -h '^test result' $A/$t-default.txt)"
CUDA_VISIBLE_DEVICES=0 CUDA_DEVICE_MAX_CONNECTIONS=1 timeout 60 $L/deps/$t --include-ignored --test-threads=1 > $A/$t-1queue.txt 2>&1; el "$t one queue rc=$? $(grep -h '^test result' $A/$t-1queue.txt)"
mps_on; CUDA_VISIBLE_DEVICES=0 timeout 60 $L/deps/$t --include-ignored --test-threads=1 > $A/$t-mps.txt 2>&1; el "$t MPS rc=$? $(grep -h '^test result' $A/$t-mps.txt)"; mps_off
CUDA_VISIBLE_DEVICES=0,1 timeout 120 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir $L --mpirun --ranks 2 --ops sendrecv --min 8M --max 512M --iters 10 --warmup 3 --timeout 60 --repeat 2 \
  --configs tcpxr-gpu,tcpxr-gpu+nd --variant nd:NCCL_TCPXR_BOUNCE_DEMOTE=0 --out $A/s > $A/s.txt 2>&1
el "s rc=$? $(grep -c ' ok, ' $A/s.txt) ok"
for f in $A/s/r*/logs/sendrecv.tcpxr-gpu*; do echo "$(echo $f | sed "s#$A/##"): $(grep -ho 'copies into GPU memory.*' $f | head -1)"; done > $A/copy-counters.txt 2>&1
cut -c1-150 $A/copy-counters.txt
checks $L
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
