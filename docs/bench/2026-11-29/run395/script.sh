#!/bin/bash
# run395 (one H200, session 48): the GPU test binaries on e36cb32e (dist/c80: exact control
# reads; an inline payload bound for GPU memory is now read straight into its pinned slot):
# gpu, gpu_copy_in, gpu_demote, gpu_hazard, gpu_tcpx by default, with CUDA_DEVICE_MAX_CONNECTIONS=1
# and under MPS; spread by default (gpu_tests).
cd "$(dirname "$0")/.."; A=/tmp/run395; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c80: $(cat dist/c80/commit.txt)" >> $A/machine.txt
gpu_tests dist/c80
el done
