#!/bin/bash
# run290 (a 2-GPU host): item 1's mid band at 2 ranks one per GPU, where tcpxr trails Socket's
# best (all_reduce 512 KiB-2 MiB 0.85-0.93, sendrecv 256 KiB 0.89; run 287 and runs 281-282):
# which of tcpxr's choices costs there. dist/c34 (library as 39b4bd9b), host buffers, all_reduce
# and sendrecv 128 KiB-4 MiB, 200 iterations, three passes in the runner's alternating order:
# tcpxr, without its tuner (NCCL's own algorithm and channels), 2 stripes, no idle chunks,
# Socket 1x1 and 2x2 (the best there in run 287); then NCCL's choices (TUNING) for tcpxr with and
# without its tuner and for Socket 2x2.
cd "$(dirname "$0")/.."; A=/tmp/run290; source dist/common.sh
start_run; echo "c34: $(cat dist/c34/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
CUDA_VISIBLE_DEVICES=0,1 timeout 380 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c34 --mpirun --ranks 2 --ops all_reduce,sendrecv --min 128K --max 4M --iters 200 --warmup 20 --timeout 60 --repeat 3 \
  --configs tcpxr-host,tcpxr-host+t0,tcpxr-host+s2,tcpxr-host+ic0,socket-1x1,socket-2x2 --variant t0:NCCL_TCPXR_TUNER=0 --variant s2:NCCL_TCPXR_STRIPES=2 --variant ic0:NCCL_TCPXR_IDLE_CHUNK_BYTES=0 --out $A/m > $A/m.txt 2>&1
el "m rc=$? $(grep -c ' ok, ' $A/m.txt) ok, $(grep -c FAILED $A/m.txt) failed"
CUDA_VISIBLE_DEVICES=0,1 timeout 60 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c34 --mpirun --ranks 2 --ops all_reduce --min 128K --max 4M --iters 2 --warmup 1 --timeout 25 \
  --configs tcpxr-host,tcpxr-host+t0,socket-2x2 --variant t0:NCCL_TCPXR_TUNER=0 --env NCCL_DEBUG_SUBSYS=INIT,NET,TUNING --out $A/tuning > $A/tuning.txt 2>&1
for c in tcpxr-host tcpxr-host+t0 socket-2x2; do echo "== $c"; grep -h "AllReduce:" $A/tuning/logs/all_reduce.$c.* | sed 's/^.*NCCL INFO //' | sort | uniq -c; done > $A/tuning-choices.txt
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
