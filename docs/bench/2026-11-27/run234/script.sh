#!/bin/bash
# run234 (one H200, 16 cores; 2026-11-27, twenty-seventh session): f243038, receives into GPU memory
# from 64 KiB put in place by the copy engine (NCCL_TCPXR_GPU_COPY_BYTES). 1) The GPU test binaries
# with one hardware queue and under MPS (gpu_hazard: copies and records-only with one queue;
# gpu_copy_in: 16 receives in flight on both sides of the threshold). 2) The correctness set
# (checks: 3 and 4 ranks on GPU 0 under MPS, host and GPU buffers, all_reduce and sendrecv with
# NCCL's choice, Ring, Tree; 4 ranks GPU buffers with one queue; 8 B-32 MiB -c 1). 3) Speed, 2 ranks
# under MPS: host buffers, GPU buffers with copies, GPU buffers with records only
# (NCCL_TCPXR_GPU_COPY_BYTES=0), sendrecv and all_reduce 64 KiB-512 MiB, 10 iterations, --repeat 2.
# PART=1: 1) and 2); PART=2: 3) (two calls on one warm machine, each under the 10-minute limit).
cd "$(dirname "$0")/.."; A=/tmp/run234-$PART; source dist/common.sh
L=dist/c1
{ date -u; uname -r; nvidia-smi -L; nproc; echo "new: $(cat $L/commit.txt)"; uptime; } > $A/machine.txt 2>&1
trap "tar cJf $R/run234-$PART.tar.xz -C /tmp run234-$PART" EXIT
[ -x /tmp/nt-2.28.3/build/sendrecv_perf ] || (build_tests_in /tmp/nt-2.28.3 /usr 14) & BUILD=$!
if [ $PART = 1 ]; then
gt(){ for t in gpu_hazard gpu_copy_in gpu device_unpack_peers gpu_tcpx device_unpack_tcpx; do echo "== $t"; timeout 120 $L/deps/$t --include-ignored --test-threads=1 --nocapture; echo "== $t rc=$?"; done; }
( export TCPXR_REQUIRE_GPU=1 TCPX_EMU_LIB=$PWD/$L/libtcpx_emu.so TCPXR_BENCH=$PWD/$L/tcpxr-bench CUDA_DEVICE_MAX_CONNECTIONS=1; gt ) > $A/gpu-tests-1queue.txt 2>&1
el "GPU tests, one queue: $(grep -h '^== .* rc=' $A/gpu-tests-1queue.txt | tr '\n' ' ')"
mps_on
( export TCPXR_REQUIRE_GPU=1 TCPX_EMU_LIB=$PWD/$L/libtcpx_emu.so TCPXR_BENCH=$PWD/$L/tcpxr-bench; gt ) > $A/gpu-tests-mps.txt 2>&1
el "GPU tests, MPS: $(grep -h '^== .* rc=' $A/gpu-tests-mps.txt | tr '\n' ' ')"
mps_off
wait $BUILD; NT=/tmp/nt-2.28.3/build
checks $L
else
wait $BUILD; NT=/tmp/nt-2.28.3/build
timeout 420 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir $L --one-gpu --mps --ops sendrecv,all_reduce --min 64K --max 512M --iters 10 --warmup 3 --repeat 2 --timeout 100 --configs tcpxr-host,tcpxr-gpu,tcpxr-gpu+rec --variant rec:NCCL_TCPXR_GPU_COPY_BYTES=0 --out $A/speed > $A/speed.txt 2>&1
el "speed rc=$? $(grep -c ' ok, ' $A/speed.txt) ok"
fi
el done
