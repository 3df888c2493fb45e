#!/bin/bash
# run389 (one H200, session 47): Event::record folded into Event::record_on (the stream named at
# every call; lanes/send.rs and the GPU tests), dist/c77: the GPU test binaries by default, with
# CUDA_DEVICE_MAX_CONNECTIONS=1 and under MPS, and rma by default (gpu_tests).
cd "$(dirname "$0")/.."; A=/tmp/run389; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c77: $(cat dist/c77/commit.txt)" >> $A/machine.txt
gpu_tests dist/c77
el done
