#!/bin/bash
# run416 (one H200, session 51), main's head dist/c89 = 5d516991, ranks on GPU 0 under MPS, host
# buffers:
#  chunk: item 2 at 2 ranks, 4-64 MiB, where the collectives stand at 1.13-1.49 of Socket's best
#         (runs 406, 414-415; 1.5 wanted). NCCL's ring sends them as 512 KiB steps on 4 channels,
#         each one tcpxr chunk that one I/O thread moves at each end: tcpxr's chunks at 256 and
#         128 KiB (NCCL_TCPXR_CHUNK_BYTES) beside the default 512 KiB, against Socket 1x1 and 2x2;
#         the three collectives, 20 iterations, -N 2, two passes rotated.
#  four:  item 1 at 4 ranks: all_gather and reduce_scatter 8 B-4 MiB against all four tunings,
#         100 iterations, -N 3, one pass.
cd "$(dirname "$0")/.."; A=/tmp/run416; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
timeout 300 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c89 --one-gpu --mps --ranks 2 --ops all_reduce,all_gather,reduce_scatter --min 4M --max 64M --iters 20 --warmup 3 --cycles 2 --timeout 60 --repeat 2 \
  --configs tcpxr-host,tcpxr-host+ck256,tcpxr-host+ck128,socket-1x1,socket-2x2 --variant ck256:NCCL_TCPXR_CHUNK_BYTES=262144 --variant ck128:NCCL_TCPXR_CHUNK_BYTES=131072 --out $A/chunk > $A/chunk.txt 2>&1
el "chunk rc=$? $(grep -c ' ok, ' $A/chunk.txt) ok, $(grep -c FAILED $A/chunk.txt) failed"
timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c89 --one-gpu --mps --ranks 4 --ops all_gather,reduce_scatter --min 8 --max 4M --iters 100 --warmup 10 --cycles 3 --timeout 60 \
  --configs tcpxr-host,socket,socket-1x1,socket-2x2,socket-4x4 --out $A/four > $A/four.txt 2>&1
el "four rc=$? $(grep -c ' ok, ' $A/four.txt) ok, $(grep -c FAILED $A/four.txt) failed"
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
