#!/bin/bash
# run299 (a 4-GPU host, one rank per GPU): the tuner row from run 298 (dist/c37: an all_reduce of a
# 2-8 KiB share on at most 4 ranks runs the ring where NCCL would run the tree's LL) against main
# fabe4c6f (dist/c36) through NCCL_NET_PLUGIN. all_reduce 4-64 KiB, 200 iterations, three passes:
# 4 ranks, host buffers (new, main, Socket default and 1x1) and GPU buffers (new, main); 3 ranks,
# host buffers (new, main, Socket default and 1x1). NCCL's choices with the new row (TUNING, 2
# iterations, host and GPU buffers at 4 ranks, host at 3).
cd "$(dirname "$0")/.."; A=/tmp/run299; source dist/common.sh
start_run; echo "c36: $(cat dist/c36/commit.txt); c37: $(cat dist/c37/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
OLD=NCCL_NET_PLUGIN=$PWD/dist/c36/libnccl-net-tcpxr.so
timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c37 --mpirun --ranks 4 --ops all_reduce --min 4K --max 64K --iters 200 --warmup 20 --timeout 30 --repeat 3 \
  --configs tcpxr-host,tcpxr-host+old,tcpxr-gpu,tcpxr-gpu+old,socket,socket-1x1 --variant old:$OLD --out $A/r4 > $A/r4.txt 2>&1
el "r4 rc=$? $(grep -c ' ok, ' $A/r4.txt) ok, $(grep -c FAILED $A/r4.txt) failed"
rm -rf $A/r4/r*/logs
CUDA_VISIBLE_DEVICES=0,1,2 timeout 150 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c37 --mpirun --ranks 3 --ops all_reduce --min 4K --max 64K --iters 200 --warmup 20 --timeout 30 --repeat 3 \
  --configs tcpxr-host,tcpxr-host+old,socket,socket-1x1 --variant old:$OLD --out $A/r3 > $A/r3.txt 2>&1
el "r3 rc=$? $(grep -c ' ok, ' $A/r3.txt) ok, $(grep -c FAILED $A/r3.txt) failed"
rm -rf $A/r3/r*/logs
timeout 40 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c37 --mpirun --ranks 4 --ops all_reduce --min 4K --max 64K --iters 2 --warmup 1 --timeout 25 \
  --configs tcpxr-host,tcpxr-gpu --env NCCL_DEBUG_SUBSYS=INIT,NET,TUNING --out $A/t4 > $A/t4.txt 2>&1
CUDA_VISIBLE_DEVICES=0,1,2 timeout 40 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c37 --mpirun --ranks 3 --ops all_reduce --min 4K --max 64K --iters 2 --warmup 1 --timeout 25 \
  --configs tcpxr-host --env NCCL_DEBUG_SUBSYS=INIT,NET,TUNING --out $A/t3 > $A/t3.txt 2>&1
for t in t4:tcpxr-host t4:tcpxr-gpu t3:tcpxr-host; do echo "== ${t/:/ }"; grep -h "AllReduce:" $A/${t%%:*}/logs/all_reduce.${t#*:}.* | sed -E 's/^.*NCCL INFO //; s/0x[0-9a-f]+//g; s/opCount [0-9a-f]+//' | sort | uniq -c; done > $A/tuning-choices.txt 2>&1
rm -rf $A/t4/logs $A/t3/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
