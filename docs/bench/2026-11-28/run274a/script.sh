#!/bin/bash
# run274 (2026-11-28, thirty-first session; a 2-GPU host): NCCL_TCPXR_BOUNCE_DEMOTE (cldemote of
# bounce-memory receives, on by default), build dist/c27 = ef86f48f. PART a, b.
#  a: correctness: the GPU test gpu_copy_in by default, with one hardware queue and under MPS;
#     then dist/common.sh's checks (3-4 ranks on GPU 0 under MPS, NCCL's choice, Ring, Tree, host
#     and GPU buffers; 4 ranks one queue), demote on (the default).
#  b: speed: 2 ranks one per GPU, sendrecv and all_reduce 8-512 MiB, 10 iterations, three passes:
#     host buffers, GPU buffers demote on (default) and off; then 8 B-4 MiB, 20 iterations, two
#     passes, GPU buffers on and off.
PART=${1:?a or b}
cd "$(dirname "$0")/.."; A=/tmp/run274$PART; source dist/common.sh
start_run; echo "c27: $(cat dist/c27/commit.txt)" >> $A/machine.txt
grep -o -w -E "cldemote" /proc/cpuinfo | sort | uniq -c >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
L=dist/c27
case $PART in
  a) export TCPXR_REQUIRE_GPU=1 TCPXR_BENCH=$PWD/$L/tcpxr-bench; t=gpu_copy_in
     CUDA_VISIBLE_DEVICES=0 timeout 120 $L/deps/$t --include-ignored --test-threads=1 > $A/$t-default.txt 2>&1; el "$t default rc=$? $(grep -h '^test result' $A/$t-default.txt)"
     CUDA_VISIBLE_DEVICES=0 CUDA_DEVICE_MAX_CONNECTIONS=1 timeout 120 $L/deps/$t --include-ignored --test-threads=1 > $A/$t-1queue.txt 2>&1; el "$t one queue rc=$? $(grep -h '^test result' $A/$t-1queue.txt)"
     mps_on; CUDA_VISIBLE_DEVICES=0 timeout 120 $L/deps/$t --include-ignored --test-threads=1 > $A/$t-mps.txt 2>&1; el "$t MPS rc=$? $(grep -h '^test result' $A/$t-mps.txt)"; mps_off
     checks $L;;
  b) CUDA_VISIBLE_DEVICES=0,1 timeout 330 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir $L --mpirun --ranks 2 --ops sendrecv,all_reduce --min 8M --max 512M --iters 10 --warmup 3 --timeout 60 --repeat 3 \
       --configs tcpxr-host,tcpxr-gpu,tcpxr-gpu+nd --variant nd:NCCL_TCPXR_BOUNCE_DEMOTE=0 --out $A/s > $A/s.txt 2>&1
     el "s rc=$? $(grep -c ' ok, ' $A/s.txt) ok"
     CUDA_VISIBLE_DEVICES=0,1 timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir $L --mpirun --ranks 2 --ops sendrecv,all_reduce --min 8 --max 4M --iters 20 --warmup 5 --timeout 60 --repeat 2 \
       --configs tcpxr-gpu,tcpxr-gpu+nd --variant nd:NCCL_TCPXR_BOUNCE_DEMOTE=0 --out $A/small > $A/small.txt 2>&1
     el "small rc=$? $(grep -c ' ok, ' $A/small.txt) ok"
     for f in $A/s/r*/logs/sendrecv.tcpxr-gpu*; do echo "$(echo $f | sed "s#$A/##"): $(grep -ho 'BOUNCE_DEMOTE[^ ]*' $f | head -1) $(grep -ho 'copies into GPU memory.*' $f | head -1)"; done > $A/copy-counters.txt 2>&1;;
esac
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
