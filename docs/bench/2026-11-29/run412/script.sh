#!/bin/bash
# run412 (one H200, session 50): where sendrecv of 8-128 B at 2 ranks trails (run 408: 0.87-0.90 of
# Socket's best in steady state, 29 us against 26). tcpxr (dist/c88, 38d9f9a2) at its defaults,
# without its NCCL default of 8 channels (NCCL_MIN_NCHANNELS=4: a bound set by the user turns
# tcpxr's off; 4 is what NCCL builds for tcpxr's device), and with NCCL's own 128 KiB p2p chunk
# (NCCL_P2P_NET_CHUNKSIZE=131072; tcpxr sets 512 KiB); Socket default beside. Ranks on GPU 0 under
# MPS, host buffers, 8-128 B, 200 iterations, --cycles 3, two passes.
cd "$(dirname "$0")/.."; A=/tmp/run412; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
timeout 150 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c88 --one-gpu --mps --ranks 2 --ops sendrecv --min 8 --max 128 --iters 200 --warmup 20 --cycles 3 --timeout 60 --repeat 2 \
  --configs tcpxr-host,tcpxr-host+ch4,tcpxr-host+ck128,socket --variant ch4:NCCL_MIN_NCHANNELS=4 --variant ck128:NCCL_P2P_NET_CHUNKSIZE=131072 --out $A/small > $A/small.txt 2>&1
el "small rc=$? $(grep -c ' ok, ' $A/small.txt) ok, $(grep -c FAILED $A/small.txt) failed"
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
