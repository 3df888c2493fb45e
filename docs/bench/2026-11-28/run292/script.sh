#!/bin/bash
# run292 (a 2-GPU host): NCCL_TCPXR_INLINE_IDLE_P2P_BYTES at 64 KiB instead of auto's 128 KiB, which
# took sendrecv of 256 KiB from 132 to 113 us at 2 ranks (run 291, one instance): a second instance
# at 2 ranks one per GPU (sendrecv 32 KiB-2 MiB), and 4 ranks on GPU 0 under MPS (sendrecv and
# alltoall, NCCL's other point-to-point user, 32 KiB-2 MiB). dist/c34, host buffers, 200
# iterations, three passes: tcpxr, tcpxr with 64 KiB, Socket 1x1 and 2x2.
cd "$(dirname "$0")/.."; A=/tmp/run292; source dist/common.sh
start_run; echo "c34: $(cat dist/c34/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
V=(--configs tcpxr-host,tcpxr-host+ip64,socket-1x1,socket-2x2 --variant ip64:NCCL_TCPXR_INLINE_IDLE_P2P_BYTES=64K)
CUDA_VISIBLE_DEVICES=0,1 timeout 150 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c34 --mpirun --ranks 2 --ops sendrecv --min 32K --max 2M --iters 200 --warmup 20 --timeout 40 --repeat 3 "${V[@]}" --out $A/p2 > $A/p2.txt 2>&1
el "p2 rc=$? $(grep -c ' ok, ' $A/p2.txt) ok, $(grep -c FAILED $A/p2.txt) failed"
CUDA_VISIBLE_DEVICES=0 timeout 270 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c34 --one-gpu --mps --ranks 4 --ops sendrecv,alltoall --min 32K --max 2M --iters 200 --warmup 20 --timeout 40 --repeat 3 "${V[@]}" --out $A/p4 > $A/p4.txt 2>&1
el "p4 rc=$? $(grep -c ' ok, ' $A/p4.txt) ok, $(grep -c FAILED $A/p4.txt) failed"
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
