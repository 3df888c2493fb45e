#!/bin/bash
# run403 (one H200, session 49): a7e24060 as committed (dist/c84: the VMM host pages of 96c6f20e,
# and a probe that now makes, maps and gives back one granule). The GPU test binaries (default,
# CUDA_DEVICE_MAX_CONNECTIONS=1, MPS; rma, device_unpack*, gpu_close_held by default), and one
# nccl-tests sendrecv with GPU buffers at 2 ranks under MPS with NCCL's INFO log: which pinned
# memory tcpxr made.
cd "$(dirname "$0")/.."; A=/tmp/run403; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0
gpu_tests dist/c84
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
mps_on
MAXB=64M nt sendrecv-gpu dist/c84 2 sendrecv gpu -
el "$(grep -h 'pinned host memory' $A/sendrecv-gpu.log | sed 's/.*NET\/tcpxr : //' | sort | uniq -c | tr '\n' ' ')"
mps_off
el done
