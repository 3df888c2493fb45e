#!/bin/bash
# run239 (one H200, 16 cores; 2026-11-27, twenty-seventh session): 623727a (dist/c4). 1) The GPU test
# binaries with one hardware queue and under MPS. 2) The correctness set (checks: 3 and 4 ranks on
# GPU 0 under MPS, host and GPU buffers, all_reduce and sendrecv with NCCL's choice, Ring, Tree; 4
# ranks GPU buffers with one queue; 8 B-32 MiB -c 1). 3) dist/cehaz/hz.cu: an H2D copy beside a
# kernel waiting for the host (default, one queue, MPS), and 512 KiB-1 MiB copies' time from
# cudaHostAlloc memory and from registered mmap'd memory (what tcpxr's bounce arena is).
cd "$(dirname "$0")/.."; A=/tmp/run239; source dist/common.sh
L=dist/c4
{ date -u; uname -r; nvidia-smi -L; nproc; echo "new: $(cat $L/commit.txt)"; uptime; } > $A/machine.txt 2>&1
trap "tar cJf $R/run239.tar.xz -C /tmp run239" EXIT
(build_tests_in /tmp/nt-2.28.3 /usr 14) & BUILD=$!
gt(){ for t in gpu_hazard gpu_copy_in gpu device_unpack_peers gpu_tcpx device_unpack_tcpx; do echo "== $t"; timeout 120 $L/deps/$t --include-ignored --test-threads=1 --nocapture; echo "== $t rc=$?"; done; }
( export TCPXR_REQUIRE_GPU=1 TCPX_EMU_LIB=$PWD/$L/libtcpx_emu.so TCPXR_BENCH=$PWD/$L/tcpxr-bench CUDA_DEVICE_MAX_CONNECTIONS=1; gt ) > $A/gpu-tests-1queue.txt 2>&1
el "GPU tests, one queue: $(grep -h '^== .* rc=' $A/gpu-tests-1queue.txt | tr '\n' ' ')"
(cd dist/cehaz && nvcc -O2 -arch=sm_90 -o /tmp/hz hz.cu) && for m in copy kernel; do echo "== default $m"; timeout 20 /tmp/hz $m; echo "== 1 queue $m"; CUDA_DEVICE_MAX_CONNECTIONS=1 timeout 20 /tmp/hz $m; done > $A/hz.txt 2>&1
mps_on
( export TCPXR_REQUIRE_GPU=1 TCPX_EMU_LIB=$PWD/$L/libtcpx_emu.so TCPXR_BENCH=$PWD/$L/tcpxr-bench; gt ) > $A/gpu-tests-mps.txt 2>&1
el "GPU tests, MPS: $(grep -h '^== .* rc=' $A/gpu-tests-mps.txt | tr '\n' ' ')"
for m in copy kernel; do echo "== MPS $m"; timeout 20 /tmp/hz $m; echo "== MPS 1 queue $m"; CUDA_DEVICE_MAX_CONNECTIONS=1 timeout 20 /tmp/hz $m; done >> $A/hz.txt 2>&1
mps_off
el "hz: $(grep -h 'beside' $A/hz.txt | tr '\n' ' ')"
wait $BUILD; NT=/tmp/nt-2.28.3/build
checks $L
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
