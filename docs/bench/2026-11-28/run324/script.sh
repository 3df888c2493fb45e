#!/bin/bash
# run324 (a 4-GPU host): dist/c48 = main + lo reported at 10 Gb/s where a process moves host buffers
# on tcpxr's 8 channels (NCCL's ring Simple kernel then runs 256 threads a channel, runs 322-323).
# 1. its checks: 3 and 4 ranks on GPU 0 under MPS, host and GPU buffers, all_reduce, all_gather,
#    sendrecv, NCCL's choice, Ring, Tree (all_gather skipped: NCCL has none); 4 ranks with
#    CUDA_DEVICE_MAX_CONNECTIONS=1; 8 B-32 MiB -c 1;
# 2. 2 ranks one per GPU: c48 against c48 with NCCL_TCPXR_SPEED_MBPS=400000 (main's report, "old")
#    and Socket 1x1, 2x2: all_reduce, all_gather, sendrecv 256 KiB-256 MiB, 20 iterations, --repeat 2;
# 3. 4 ranks one per GPU, sendrecv, the same;
# 4. 2 ranks on GPU 0 under MPS: all_reduce 256 KiB-256 MiB, c48 against old, --repeat 2.
cd "$(dirname "$0")/.."; A=/tmp/run324; source dist/common.sh
start_run; echo "c48: $(cat dist/c48/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
checks dist/c48 all_reduce,all_gather,sendrecv
V=(--variant old:NCCL_TCPXR_SPEED_MBPS=400000)
rt(){ local name=$1 t=$2 gpus=$3; shift 3
  CUDA_VISIBLE_DEVICES=$gpus timeout $t python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c48 --timeout 60 "${V[@]}" --out $A/$name "$@" > $A/$name.txt 2>&1
  el "$name rc=$? $(grep -c ' ok, ' $A/$name.txt) ok, $(grep -c FAILED $A/$name.txt) failed"; }
rt r2 170 0,1 --mpirun --ranks 2 --ops all_reduce,all_gather,sendrecv --min 256K --max 256M --iters 20 --warmup 3 --repeat 2 --configs tcpxr-host,tcpxr-host+old,socket-1x1,socket-2x2
rt s4 80 0,1,2,3 --mpirun --ranks 4 --ops sendrecv --min 256K --max 256M --iters 20 --warmup 3 --repeat 2 --configs tcpxr-host,tcpxr-host+old,socket-1x1,socket-2x2
rt m2 80 0 --one-gpu --mps --ranks 2 --ops all_reduce --min 256K --max 256M --iters 20 --warmup 3 --repeat 2 --configs tcpxr-host,tcpxr-host+old
grep -h "NCCL_TCPXR_SPEED_MBPS" $A/r2/r1/logs/all_reduce.tcpxr-host.nccl.* 2>/dev/null | sed 's/^.*NCCL INFO //' | sort | uniq -c > $A/speed-lines.txt
rm -rf $A/*/r*/logs $A/*/logs $A/check-*/logs $A/check-*/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
