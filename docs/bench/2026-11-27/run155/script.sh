#!/bin/bash
# run155 (the same 4-GPU host as run154, right after it: NCCL 2.30.7, its nccl-tests and put_signal
# as run154 built them in /tmp), issue 32: tests/rma.rs's GPU tests with default connections, with
# CUDA_DEVICE_MAX_CONNECTIONS=1 and under MPS; then NCCL 2.30.7's ncclPutSignal/ncclWaitSignal
# (ncclTests/gin/put_signal.c, 8 B-8 MiB) and alltoall_perf -R 2 -D 3 (GIN kernels, 8 B-256 MiB) at 2
# ranks, one per GPU, each its own NCCL host, through tcpxr's RMA (NCCL_TCPXR_RMA=1), beside NCCL's
# own alltoall over tcpxr and over Socket.
cd "$(dirname "$0")/.."; A=/tmp/run155; source dist/common.sh
export CUDA_VISIBLE_DEVICES=0,1,2,3
fin(){ tar czf $R/run155.tgz -C /tmp run155; }; trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/commit.txt; ls -la /tmp/nccl-2.30.7/lib/libnccl.so* /tmp/put_signal; } > $A/machine.txt 2>&1
LIB=$PWD/dist/libnccl-net-tcpxr.so
# 32: the RMA table's GPU tests, then NCCL 2.30.7's host RMA and GIN kernels over it
R1(){ local name=$1; shift; ( export TCPXR_REQUIRE_GPU=1 NCCL_TCPXR_IFNAME=lo CUDA_VISIBLE_DEVICES=0 "$@"; timeout 120 dist/deps/rma --include-ignored --test-threads=1 ${TESTS:-} ) > $A/$name.txt 2>&1; el "$name rc=$? $(grep -h 'test result' $A/$name.txt)"; }
R1 rma-default
CUDA_DEVICE_MAX_CONNECTIONS=1 TESTS="one_hardware_queue_means_no_rma_device_and_a_warn_saying_why gpu_puts" R1 rma-1queue CUDA_DEVICE_MAX_CONNECTIONS=1
mps_on; TESTS="gpu_rma_is_refused_under_mps one_hardware_queue_means_no_rma_device_and_a_warn_saying_why" R1 rma-mps TCPXR_EXPECT_MPS=1; mps_off
GENV=(NCCL_NET_PLUGIN=$LIB NCCL_RMA_PLUGIN=$LIB NCCL_TCPXR_RMA=1 NCCL_GIN_TYPE=2 NCCL_SOCKET_IFNAME=lo NCCL_TCPXR_IFNAME=lo NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV LD_LIBRARY_PATH=/tmp/nccl-2.30.7/lib:$LD_LIBRARY_PATH)
rm -f /tmp/ps.id; for r in 0 1; do env "${GENV[@]}" CUDA_VISIBLE_DEVICES=$r NCCL_HOSTID=g$r timeout 90 /tmp/put_signal $r 2 /tmp/ps.id $((8<<20)) 20 > $A/put_signal.$r.log 2>&1 & done; wait
el "put_signal: $(grep -h 'PASS\|FAIL' $A/put_signal.*.log | tr '\n' ' ') | $(grep -a -h -o 'RMA/Plugin: [^,]*tcpxr[^,]*' $A/put_signal.0.log | sort -u | tr '\n' ';')"
XS=(); for kv in "${GENV[@]}"; do XS+=(-x "$kv"); done
timeout 150 mpirun --allow-run-as-root --bind-to none -np 2 -x CUDA_VISIBLE_DEVICES "${XS[@]}" sh -c 'NCCL_HOSTID="g${OMPI_COMM_WORLD_RANK}" exec "$@"' sh /tmp/nt-2.30.7/build/alltoall_perf -b 8 -e 256M -f 4 -R 2 -D 3 -c 1 -n 5 -w 2 -g 1 > $A/alltoall_gin.log 2>&1
el "alltoall GIN rc=$? $(grep -a -h 'Out of bounds' $A/alltoall_gin.log | awk '{print $7,$8}') | $(grep -a -h -o 'RMA/Plugin: [^,]*tcpxr[^,]*\|GIN/Plugin: [^,]*' $A/alltoall_gin.log | sort -u | tr '\n' ';')"
for cfg in tcpxr socket; do if [ $cfg = tcpxr ]; then X=(-x NCCL_NET=tcpxr -x NCCL_NET_PLUGIN=$LIB); else X=(-x NCCL_NET=Socket -x NCCL_NET_PLUGIN=none); fi
  timeout 100 mpirun --allow-run-as-root --bind-to none -np 2 -x CUDA_VISIBLE_DEVICES -x LD_LIBRARY_PATH=/tmp/nccl-2.30.7/lib:$LD_LIBRARY_PATH -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 -x NCCL_SOCKET_IFNAME=lo -x NCCL_NVLS_ENABLE=0 -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,NET "${X[@]}" sh -c 'NCCL_HOSTID="g${OMPI_COMM_WORLD_RANK}" exec "$@"' sh /tmp/nt-2.30.7/build/alltoall_perf -b 8 -e 256M -f 4 -c 1 -n 5 -w 2 -g 1 > $A/alltoall_$cfg.log 2>&1; el "alltoall $cfg rc=$? $(grep -a -h 'Out of bounds' $A/alltoall_$cfg.log | awk '{print $7,$8}')"; done
