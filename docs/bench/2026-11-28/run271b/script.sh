#!/bin/bash
# run271 (2026-11-28, thirty-first session; run269.sh as prepared, dist/c25 = copy-hold rebased on main e95f9ec8; a 2- or 4-GPU host): the
# branch copy-hold (dist/c25: NCCL_TCPXR_GPU_COPY_HOLD_US, off by default), PART a and b.
#  a: correctness: the GPU test binaries gpu_copy_in and gpu_copy_hold by default, with one
#     hardware queue and under MPS; then dist/common.sh's checks (3-4 ranks on GPU 0 under MPS,
#     NCCL's choice, Ring, Tree, host and GPU buffers; 4 ranks one queue) with the hold at 100 us.
#  b: speed: 2 ranks one per GPU (GPUs 0-1), sendrecv and all_reduce 8-512 MiB, 10 iterations,
#     GPU buffers with the hold at 0, 100 and 150 us and host buffers, three passes (--repeat 3),
#     the copy counters per run.
#  c: (a 4-GPU host) the same as b at 4 ranks one per GPU, sendrecv only, two passes.
PART=${1:?a, b or c}
cd "$(dirname "$0")/.."; A=/tmp/run271$PART; source dist/common.sh
start_run; echo "c25: $(cat dist/c25/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
L=dist/c25
case $PART in
  a) export TCPXR_REQUIRE_GPU=1 TCPXR_BENCH=$PWD/$L/tcpxr-bench
     for t in gpu_copy_in gpu_copy_hold; do
       CUDA_VISIBLE_DEVICES=0 timeout 120 $L/deps/$t --include-ignored --test-threads=1 > $A/$t-default.txt 2>&1; el "$t default rc=$? $(grep -h '^test result' $A/$t-default.txt)"
       CUDA_VISIBLE_DEVICES=0 CUDA_DEVICE_MAX_CONNECTIONS=1 timeout 120 $L/deps/$t --include-ignored --test-threads=1 > $A/$t-1queue.txt 2>&1; el "$t one queue rc=$? $(grep -h '^test result' $A/$t-1queue.txt)"
       mps_on; CUDA_VISIBLE_DEVICES=0 timeout 120 $L/deps/$t --include-ignored --test-threads=1 > $A/$t-mps.txt 2>&1; el "$t MPS rc=$? $(grep -h '^test result' $A/$t-mps.txt)"; mps_off
     done
     # The correctness set with the hold on (run_nccl_tests.py's --env reaches every rank).
     checks_hold(){ local np algo al
       for np in 3 4; do for algo in NCCL Ring Tree; do
         al=(); [ $algo != NCCL ] && al=(--algo $algo)
         CUDA_VISIBLE_DEVICES=0 timeout 100 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir $L --one-gpu --mps --ranks $np "${al[@]}" --env NCCL_TCPXR_GPU_COPY_HOLD_US=100 --ops all_reduce,sendrecv --configs tcpxr-host,tcpxr-gpu --max 32M --iters 2 --warmup 1 --timeout 60 --out $A/check-$np-$algo > $A/check-$np-$algo.txt 2>&1
         el "check $np ranks $algo hold 100 rc=$? $(grep -c ' ok, ' $A/check-$np-$algo.txt) ok, $(grep -c FAILED $A/check-$np-$algo.txt) failed"
       done; done
       CUDA_VISIBLE_DEVICES=0 timeout 100 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir $L --one-gpu --ranks 4 --env CUDA_DEVICE_MAX_CONNECTIONS=1 --env NCCL_TCPXR_GPU_COPY_HOLD_US=100 --ops all_reduce,sendrecv --configs tcpxr-gpu --max 32M --iters 2 --warmup 1 --timeout 90 --out $A/check-4-cdmc1 > $A/check-4-cdmc1.txt 2>&1
       el "check 4 ranks one queue hold 100 rc=$? $(grep -c ' ok, ' $A/check-4-cdmc1.txt) ok, $(grep -c FAILED $A/check-4-cdmc1.txt) failed"; }
     checks_hold;;
  b) CUDA_VISIBLE_DEVICES=0,1 timeout 500 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir $L --mpirun --ranks 2 --ops sendrecv,all_reduce --min 8M --max 512M --iters 10 --warmup 3 --timeout 60 --repeat 3 \
       --configs tcpxr-host,tcpxr-gpu,tcpxr-gpu+h100,tcpxr-gpu+h150 --variant h100:NCCL_TCPXR_GPU_COPY_HOLD_US=100 --variant h150:NCCL_TCPXR_GPU_COPY_HOLD_US=150 --out $A/s > $A/s.txt 2>&1
     el "s rc=$? $(grep -c ' ok, ' $A/s.txt) ok"
     for f in $A/s/r*/logs/sendrecv.tcpxr-gpu*; do echo "$(echo $f | sed "s#$A/##"): $(grep -ho 'copies into GPU memory.*' $f | head -1)"; done > $A/copy-counters.txt 2>&1;;
  c) timeout 500 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir $L --mpirun --ranks 4 --ops sendrecv --min 8M --max 512M --iters 10 --warmup 3 --timeout 60 --repeat 2 \
       --configs tcpxr-host,tcpxr-gpu,tcpxr-gpu+h100,tcpxr-gpu+h150 --variant h100:NCCL_TCPXR_GPU_COPY_HOLD_US=100 --variant h150:NCCL_TCPXR_GPU_COPY_HOLD_US=150 --out $A/s4 > $A/s4.txt 2>&1
     el "s4 rc=$? $(grep -c ' ok, ' $A/s4.txt) ok"
     for f in $A/s4/r*/logs/sendrecv.tcpxr-gpu*; do echo "$(echo $f | sed "s#$A/##"): $(grep -ho 'copies into GPU memory.*' $f | head -1)"; done > $A/copy-counters.txt 2>&1;;
esac
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
