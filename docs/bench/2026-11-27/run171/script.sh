#!/bin/bash
# run171 (a 2- or 4-GPU host; prepared 2026-11-27 for the next session), issue 32's last check: the
# legacy-stream read of never-reset signal windows (7800683) on a GPU. tests/rma.rs's GPU tests
# (default connections), the one-queue refusal, then NCCL 2.30.7 built here, GIN alltoall_perf
# -R 2 -D 3 8 B-256 MiB and put_signal 8 B-256 MiB at 2 ranks (GPUs 0,1) with NCCL_TCPXR_STATS=1
# and NCCL's log checked for no "could not be read" WARN; last, MPS on: the MPS refusal. Also, for
# e4e7803 (src/gpu split into files, code moved only): the net's GPU test binaries with one hardware
# queue and under MPS, as runs 146 and 148 ran them, and all_reduce with GPU buffers at 3 ranks on
# GPU 0 under MPS with Ring and Tree forced (nccl-tests -c 1, 8 B-32 MiB).
cd "$(dirname "$0")/.."; A=/tmp/run171; source dist/common.sh
start_run
T(){ local name=$1; shift; ( export TCPXR_REQUIRE_GPU=1 NCCL_TCPXR_IFNAME=lo CUDA_VISIBLE_DEVICES=1 "$@"; timeout 200 dist/deps/rma --include-ignored --test-threads=1 --nocapture ${TESTS:-} ) > $A/$name.txt 2>&1; el "$name rc=$? $(grep -h 'test result' $A/$name.txt)"; }
(JOBS=30 timeout 300 bash dist/build_nccl.sh dist/nccl-src/v2.30.7-1 /tmp/nccl-2.30.7 > $A/nccl-2.30.7-build.txt 2>&1; el "NCCL 2.30.7 build rc=$?") &
BUILD=$!
T rma-default
TESTS=one_hardware_queue_means_no_rma_device_and_a_warn_saying_why T rma-1queue CUDA_DEVICE_MAX_CONNECTIONS=1
wait $BUILD
build_tests_in /tmp/nt-2.30.7 /tmp/nccl-2.30.7 30
tests_228
gcc -O2 -o /tmp/put_signal ncclTests/gin/put_signal.c -I/tmp/nccl-2.30.7/include -I/usr/local/cuda/include -L/tmp/nccl-2.30.7/lib -L/usr/local/cuda/lib64 -lnccl -lcudart; el "put_signal build rc=$?"
LIB=$PWD/dist/libnccl-net-tcpxr.so
GENV=(NCCL_NET_PLUGIN=$LIB NCCL_RMA_PLUGIN=$LIB NCCL_TCPXR_RMA=1 NCCL_GIN_TYPE=2 NCCL_TCPXR_STATS=1 NCCL_SOCKET_IFNAME=lo NCCL_TCPXR_IFNAME=lo NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV LD_LIBRARY_PATH=/tmp/nccl-2.30.7/lib:$LD_LIBRARY_PATH)
XS=(); for kv in "${GENV[@]}"; do XS+=(-x "$kv"); done
timeout 200 mpirun --allow-run-as-root --bind-to none -np 2 -x CUDA_VISIBLE_DEVICES=0,1 "${XS[@]}" sh -c 'NCCL_HOSTID="g${OMPI_COMM_WORLD_RANK}" exec "$@"' sh /tmp/nt-2.30.7/build/alltoall_perf -b 8 -e 256M -f 4 -R 2 -D 3 -c 1 -n 5 -w 2 -g 1 > $A/gin2.log 2>&1
el "gin2 rc=$? $(grep -a -h 'Out of bounds' $A/gin2.log | awk '{print $7,$8}') | unread windows: $(grep -a -c 'could not be read' $A/gin2.log) | $(grep -a -h -o 'GIN/Plugin: Assigned[^,]*' $A/gin2.log | sort -u)"
rm -f /tmp/ps.id; for r in 0 1; do env "${GENV[@]}" CUDA_VISIBLE_DEVICES=$r NCCL_HOSTID=g$r timeout 200 /tmp/put_signal $r 2 /tmp/ps.id $((256<<20)) 5 > $A/put_signal.$r.log 2>&1 & done; wait
el "put_signal 2 ranks: $(grep -a -h 'PASS\|FAIL' $A/put_signal.*.log | tr '\n' ' ') | unread windows: $(grep -a -c 'could not be read' $A/put_signal.0.log)"
gt(){ for t in gpu_hazard gpu gpu_tcpx device_unpack_tcpx device_unpack_peers; do echo "== $t"; timeout 100 dist/deps/$t --include-ignored --test-threads=1 --nocapture; echo "== $t rc=$?"; done; }
( export TCPXR_REQUIRE_GPU=1 TCPX_EMU_LIB=$PWD/dist/libtcpx_emu.so TCPXR_BENCH=$PWD/dist/tcpxr-bench CUDA_DEVICE_MAX_CONNECTIONS=1 CUDA_VISIBLE_DEVICES=0; gt ) > $A/gpu-tests-1queue.txt 2>&1
el "GPU tests, one queue: $(grep -h '^== .* rc=' $A/gpu-tests-1queue.txt | tr '\n' ' ')"
mps_on
TESTS=gpu_rma_is_refused_under_mps T rma-mps TCPXR_EXPECT_MPS=1
for algo in Ring Tree; do nt m3-gpu-all_reduce-$algo dist 3 all_reduce gpu $algo CUDA_VISIBLE_DEVICES=0; done
( export TCPXR_REQUIRE_GPU=1 TCPX_EMU_LIB=$PWD/dist/libtcpx_emu.so TCPXR_BENCH=$PWD/dist/tcpxr-bench CUDA_VISIBLE_DEVICES=0; gt ) > $A/gpu-tests-mps.txt 2>&1
el "GPU tests, MPS: $(grep -h '^== .* rc=' $A/gpu-tests-mps.txt | tr '\n' ' ')"
mps_off
el done
