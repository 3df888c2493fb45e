#!/bin/bash
# run295 (a 2-GPU host): 1. gpu_hazard of 8be9ac76 (dist/c35) with the TCPX emulator it needs
# (run 294 ran it without: its device-unpack cases passed, the tcpx case could not build the
# emulator there): default, CUDA_DEVICE_MAX_CONNECTIONS=1, MPS.
# 2. Item 4's collectives: with GPU buffers all_reduce and all_gather take 1.12-1.23x host
# buffers' time at 8-32 MiB at 2 ranks (run 285), where NCCL's kernel unpacks the bounce pages
# from records. 2 ranks one per GPU, 4-128 MiB, 20 iterations, three passes: host buffers, GPU
# buffers, GPU buffers with the copy engine placing every receive of 64 KiB or more on every
# connection (NCCL_TCPXR_GPU_COPY_BYTES=64K: run 237 found that slower, before copies were demoted),
# GPU buffers without tcpxr's tuner, GPU buffers with 1 MiB steps (NCCL_BUFFSIZE=8M).
cd "$(dirname "$0")/.."; A=/tmp/run295; source dist/common.sh
start_run; echo "c35: $(cat dist/c35/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
export TCPXR_REQUIRE_GPU=1 TCPX_EMU_LIB=$PWD/dist/c35/libtcpx_emu.so
t=gpu_hazard
CUDA_VISIBLE_DEVICES=0 timeout 60 dist/c35/deps/$t --include-ignored --test-threads=1 > $A/$t-default.txt 2>&1; el "$t default rc=$? $(grep -h '^test result' $A/$t-default.txt)"
CUDA_VISIBLE_DEVICES=0 CUDA_DEVICE_MAX_CONNECTIONS=1 timeout 60 dist/c35/deps/$t --include-ignored --test-threads=1 > $A/$t-1queue.txt 2>&1; el "$t one queue rc=$? $(grep -h '^test result' $A/$t-1queue.txt)"
mps_on; CUDA_VISIBLE_DEVICES=0 timeout 60 dist/c35/deps/$t --include-ignored --test-threads=1 > $A/$t-mps.txt 2>&1; el "$t MPS rc=$? $(grep -h '^test result' $A/$t-mps.txt)"; mps_off
unset TCPXR_REQUIRE_GPU TCPX_EMU_LIB
CUDA_VISIBLE_DEVICES=0,1 timeout 330 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c35 --mpirun --ranks 2 --ops all_reduce,all_gather --min 4M --max 128M --iters 20 --warmup 5 --timeout 60 --repeat 3 \
  --configs tcpxr-host,tcpxr-gpu,tcpxr-gpu+ce,tcpxr-gpu+t0,tcpxr-gpu+bs --variant ce:NCCL_TCPXR_GPU_COPY_BYTES=64K --variant t0:NCCL_TCPXR_TUNER=0 --variant bs:NCCL_BUFFSIZE=8388608 --out $A/g > $A/g.txt 2>&1
el "g rc=$? $(grep -c ' ok, ' $A/g.txt) ok, $(grep -c FAILED $A/g.txt) failed"
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
