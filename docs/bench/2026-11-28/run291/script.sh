#!/bin/bash
# run291 (a 2-GPU host): sendrecv of 256 KiB at 2 ranks took as long as 512 KiB (run 290: 141
# against 142 us; 128 KiB 86 us; Socket 119-122): NCCL splits it into two 128 KiB messages on two
# channels, the first of which goes inline on the control connection (NCCL_TCPXR_INLINE_IDLE_P2P_BYTES
# auto: 128 KiB). dist/c34, host buffers, sendrecv 32 KiB-2 MiB, 200 iterations, three passes:
# tcpxr, tcpxr with the p2p idle inline limit at 64 KiB and at 96 KiB, Socket 1x1 and 2x2.
cd "$(dirname "$0")/.."; A=/tmp/run291; source dist/common.sh
start_run; echo "c34: $(cat dist/c34/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
CUDA_VISIBLE_DEVICES=0,1 timeout 300 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c34 --mpirun --ranks 2 --ops sendrecv --min 32K --max 2M --iters 200 --warmup 20 --timeout 60 --repeat 3 \
  --configs tcpxr-host,tcpxr-host+ip64,tcpxr-host+ip96,socket-1x1,socket-2x2 --variant ip64:NCCL_TCPXR_INLINE_IDLE_P2P_BYTES=64K --variant ip96:NCCL_TCPXR_INLINE_IDLE_P2P_BYTES=96K --env NCCL_TCPXR_STATS=1 --out $A/p > $A/p.txt 2>&1
el "p rc=$? $(grep -c ' ok, ' $A/p.txt) ok, $(grep -c FAILED $A/p.txt) failed"
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
