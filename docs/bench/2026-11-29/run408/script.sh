#!/bin/bash
# run408 (one H200, session 50): main 7b99805f (dist/c85), host buffers, ranks on GPU 0 under MPS.
# (a) Sendrecv of 256 KiB (run 407: 0.75 of Socket's best at 2 ranks, steady state): NCCL's two
# 128 KiB messages, the first inline (NCCL_TCPXR_INLINE_IDLE_P2P_BYTES, auto 128 KiB), against that
# limit at 64 KiB (both striped), at 2 and 4 ranks, 32 KiB-2 MiB, all four Socket tunings, 100
# iterations, --cycles 3, three passes (runs 290-292 and 142 found the trade and then its spread).
# (b) The last note's item 3: all_reduce and sendrecv of 8-128 B at 2 ranks in steady state (200
# iterations, --cycles 3, two passes) against all four Socket tunings.
cd "$(dirname "$0")/.."; A=/tmp/run408; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
S=socket,socket-1x1,socket-2x2,socket-4x4
for np in 2 4; do
  timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c85 --one-gpu --mps --ranks $np --ops sendrecv --min 32K --max 2M --iters 100 --warmup 10 --cycles 3 --timeout 60 --repeat 3 \
    --configs tcpxr-host,tcpxr-host+p64,$S --variant p64:NCCL_TCPXR_INLINE_IDLE_P2P_BYTES=65536 --out $A/p2p-$np > $A/p2p-$np.txt 2>&1
  el "p2p $np ranks rc=$? $(grep -c ' ok, ' $A/p2p-$np.txt) ok, $(grep -c FAILED $A/p2p-$np.txt) failed"
done
timeout 180 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c85 --one-gpu --mps --ranks 2 --ops all_reduce,sendrecv --min 8 --max 128 --iters 200 --warmup 20 --cycles 3 --timeout 60 --repeat 2 \
  --configs tcpxr-host,$S --out $A/small > $A/small.txt 2>&1
el "small rc=$? $(grep -c ' ok, ' $A/small.txt) ok, $(grep -c FAILED $A/small.txt) failed"
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
