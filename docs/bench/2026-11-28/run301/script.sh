#!/bin/bash
# run301 (a 2- or 4-GPU host, 2 ranks one per GPU): item 4's sendrecv gap (GPU buffers 1.07-1.23x
# host buffers' time from 16 MiB, run 285) is the I/O threads' socket copies costing 1.2-1.7x a
# byte because the copy engine reads bounce lines still modified in their caches (runs 262-268);
# demote halves the copy's wait but costs the I/O threads what it saves them at bulk. Experiment
# (dist/c39 = main + dist/exp-bounce-wc.patch): TCPXR_EXP_BOUNCE_WC_MIB=1024 makes the bounce arena
# one write-combined pinned allocation, so the socket copies leave no line in any cache.
# 1. Correctness with it: 3 and 4 ranks on GPU 0 under MPS, GPU buffers, all_reduce and sendrecv,
#    NCCL's choice, 8 B-32 MiB -c 1; gpu_copy_in is not built with the patch (library only).
# 2. 2 ranks one per GPU, sendrecv and all_reduce 8-512 MiB, 10 iterations, three passes: host
#    buffers, GPU buffers, GPU + WC, GPU + WC without demote (NCCL_TCPXR_BOUNCE_DEMOTE=0).
cd "$(dirname "$0")/.."; A=/tmp/run301; source dist/common.sh
start_run; echo "c39: $(cat dist/c39/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
for np in 3 4; do
  CUDA_VISIBLE_DEVICES=0 timeout 100 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c39 --one-gpu --mps --ranks $np --ops all_reduce,sendrecv --configs tcpxr-gpu --env TCPXR_EXP_BOUNCE_WC_MIB=1024 --max 32M --iters 2 --warmup 1 --timeout 60 --out $A/check-$np > $A/check-$np.txt 2>&1
  el "check $np ranks WC rc=$? $(grep -c ' ok, ' $A/check-$np.txt) ok, $(grep -c FAILED $A/check-$np.txt) failed; $(grep -h -c 'EXPERIMENT: bounce memory' $A/check-$np/logs/* 2>/dev/null | awk '{s+=$1} END {print s+0}') processes said WC"
done
CUDA_VISIBLE_DEVICES=0,1 timeout 420 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c39 --mpirun --ranks 2 --ops sendrecv,all_reduce --min 8M --max 512M --iters 10 --warmup 3 --timeout 90 --repeat 3 \
  --configs tcpxr-host,tcpxr-gpu,tcpxr-gpu+wc,tcpxr-gpu+wcnd --variant wc:TCPXR_EXP_BOUNCE_WC_MIB=1024 --variant wcnd:TCPXR_EXP_BOUNCE_WC_MIB=1024 --variant wcnd:NCCL_TCPXR_BOUNCE_DEMOTE=0 --out $A/s > $A/s.txt 2>&1
el "s rc=$? $(grep -c ' ok, ' $A/s.txt) ok, $(grep -c FAILED $A/s.txt) failed"
rm -rf $A/s/r2/logs $A/s/r3/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
