#!/bin/bash
# run156 (one H200, 16 cores). The unpack kernel's GPU tests (its NVRTC module now also holds the
#   RMA signal kernel) with CUDA_DEVICE_MAX_CONNECTIONS=1 (during the builds) and under MPS. Issue 35: NCCL 2.12.12 built here from its tag (net v5 only) after
#   fcb87ac (connect completes before the peer's accept), nccl-tests built against it: all_reduce and
#   sendrecv -c 1 8 B-512 MiB at 2 and 3 ranks on GPU 0 under MPS, host buffers; NCCL 2.30.7 built
#   here (v12), the same checks with host and GPU buffers. Issue 32: tests/rma.rs's GPU tests with
#   default connections, with CUDA_DEVICE_MAX_CONNECTIONS=1 and under MPS; NCCL 2.30.7's
#   ncclPutSignal/ncclWaitSignal (ncclTests/gin/put_signal.c) and alltoall_perf -R 2 -D 3 (GIN) at 2
#   ranks on GPU 0 without MPS (MPS refuses tcpxr's RMA), beside alltoall over tcpxr and Socket.
cd "$(dirname "$0")/.."; A=/tmp/run156; source dist/common.sh
fin(){ tar czf $R/run156.tgz -C /tmp run156; }; trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
VS="2.12.12 2.30.7"; declare -A J=([2.12.12]=5 [2.30.7]=11)
for t in $VS; do (JOBS=${J[$t]} BUILD_TIMEOUT=300 timeout 310 bash dist/build_nccl.sh dist/nccl-src/v$t-1 /tmp/nccl-$t > $A/nccl-$t-build.txt 2>&1; echo "rc=$?" >> $A/nccl-$t-build.txt) & done
gt(){ for t in gpu_hazard gpu gpu_tcpx device_unpack device_unpack_tcpx device_unpack_peers; do echo "== $t"; timeout 100 dist/deps/$t --include-ignored --test-threads=1; echo "== $t rc=$?"; done; }
( export TCPXR_REQUIRE_GPU=1 TCPX_EMU_LIB=$PWD/dist/libtcpx_emu.so TCPXR_BENCH=$PWD/dist/tcpxr-bench CUDA_DEVICE_MAX_CONNECTIONS=1; gt ) > $A/gpu-tests-1queue.txt 2>&1
grep -E "^== .*rc=|test result" $A/gpu-tests-1queue.txt | sed 's/^/1queue /' | tee -a $A/steps.txt
wait
for t in $VS; do el "NCCL $t build $(tail -1 $A/nccl-$t-build.txt) $(ls /tmp/nccl-$t/lib/libnccl.so 2>/dev/null)"; done
for t in $VS; do (rm -rf /tmp/nt-$t && cp -r ncclTests/nccl-tests /tmp/nt-$t && cd /tmp/nt-$t && rm -rf build && make -j8 MPI=1 MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi CUDA_HOME=/usr/local/cuda NCCL_HOME=/tmp/nccl-$t NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" > $A/nt-$t-build.txt 2>&1; echo "rc=$?" >> $A/nt-$t-build.txt) & done; wait
for t in $VS; do el "nccl-tests vs $t $(tail -1 $A/nt-$t-build.txt)"; done
gcc -O2 -o /tmp/put_signal ncclTests/gin/put_signal.c -I/tmp/nccl-2.30.7/include -I/usr/local/cuda/include -L/tmp/nccl-2.30.7/lib -L/usr/local/cuda/lib64 -lnccl -lcudart; el "put_signal build rc=$?"
LIB=$PWD/dist/libnccl-net-tcpxr.so
v(){ local name=$1 t=$2 np=$3 op=$4; shift 4
  timeout 100 mpirun --allow-run-as-root --bind-to none -np $np -x LD_LIBRARY_PATH=/tmp/nccl-$t/lib:$PWD/dist:$LD_LIBRARY_PATH -x NCCL_NET_PLUGIN=tcpxr -x NCCL_NET=tcpxr -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 -x NCCL_SOCKET_IFNAME=lo -x NCCL_NVLS_ENABLE=0 -x NCCL_TESTS_DEVICE=0 -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,NET "$@" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh /tmp/nt-$t/build/${op}_perf -b 8 -e 512M -f 4 -n 3 -w 1 -c 1 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(grep -a -h 'Out of bounds' $A/$name.log | awk '{print $7,$8}') | $(grep -a -m1 -o 'NCCL version [0-9.]*' $A/$name.log) | $(grep -a -m1 -o 'NCCL called ncclNetPlugin_v[0-9]*' $A/$name.log) | $(grep -a -m1 -o 'GPU buffers [a-z]*' $A/$name.log) | GDRDMA $(grep -a -c 'GDRDMA' $A/$name.log) | $(grep -a -m1 -o 'Loaded net plugin [^ ]* *([^)]*)\|Using network [A-Za-z]*' $A/$name.log) | $(grep -a -m1 -o 'tuner (ncclTunerPlugin_v[0-9]*)' $A/$name.log)"; }
mps_on
for np in 2 3; do for op in all_reduce sendrecv; do v 2.12.12-$np-$op 2.12.12 $np $op; v 2.30.7-$np-$op 2.30.7 $np $op; v 2.30.7-$np-gpu-$op 2.30.7 $np $op -x NCCL_NET_GDR_LEVEL=SYS -x NCCL_TCPXR_GPU_BUFFERS=1; done; done
( export TCPXR_REQUIRE_GPU=1 TCPX_EMU_LIB=$PWD/dist/libtcpx_emu.so TCPXR_BENCH=$PWD/dist/tcpxr-bench; gt ) > $A/gpu-tests-mps.txt 2>&1
grep -E "^== .*rc=|test result" $A/gpu-tests-mps.txt | sed 's/^/mps /' | tee -a $A/steps.txt
TESTS="gpu_rma_is_refused_under_mps one_hardware_queue_means_no_rma_device_and_a_warn_saying_why"; ( export TCPXR_REQUIRE_GPU=1 NCCL_TCPXR_IFNAME=lo TCPXR_EXPECT_MPS=1; timeout 60 dist/deps/rma --include-ignored --test-threads=1 $TESTS ) > $A/rma-mps.txt 2>&1; el "rma-mps rc=$? $(grep -h 'test result' $A/rma-mps.txt)"
mps_off
( export TCPXR_REQUIRE_GPU=1 NCCL_TCPXR_IFNAME=lo; timeout 120 dist/deps/rma --include-ignored --test-threads=1 ) > $A/rma-default.txt 2>&1; el "rma-default rc=$? $(grep -h 'test result' $A/rma-default.txt)"
( export TCPXR_REQUIRE_GPU=1 NCCL_TCPXR_IFNAME=lo CUDA_DEVICE_MAX_CONNECTIONS=1; timeout 60 dist/deps/rma --include-ignored --test-threads=1 one_hardware_queue_means_no_rma_device_and_a_warn_saying_why ) > $A/rma-1queue.txt 2>&1; el "rma-1queue rc=$? $(grep -h 'test result' $A/rma-1queue.txt)"
GENV=(NCCL_NET_PLUGIN=$LIB NCCL_RMA_PLUGIN=$LIB NCCL_TCPXR_RMA=1 NCCL_GIN_TYPE=2 NCCL_SOCKET_IFNAME=lo NCCL_TCPXR_IFNAME=lo NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV LD_LIBRARY_PATH=/tmp/nccl-2.30.7/lib:$LD_LIBRARY_PATH)
rm -f /tmp/ps.id; for r in 0 1; do env "${GENV[@]}" NCCL_HOSTID=g$r timeout 90 /tmp/put_signal $r 2 /tmp/ps.id $((8<<20)) 20 > $A/put_signal.$r.log 2>&1 & done; wait
el "put_signal: $(grep -a -h 'PASS\|FAIL' $A/put_signal.*.log | cut -c1-300 | tr '\n' ' ') | $(grep -a -h -o 'RMA/Plugin: [^,]*tcpxr[^,]*' $A/put_signal.0.log | sort -u | tr '\n' ';')"
XS=(); for kv in "${GENV[@]}"; do XS+=(-x "$kv"); done
timeout 120 mpirun --allow-run-as-root --bind-to none -np 2 "${XS[@]}" -x NCCL_TESTS_DEVICE=0 sh -c 'NCCL_HOSTID="g${OMPI_COMM_WORLD_RANK}" exec "$@"' sh /tmp/nt-2.30.7/build/alltoall_perf -b 8 -e 64M -f 4 -R 2 -D 3 -c 1 -n 5 -w 2 -g 1 > $A/alltoall_gin.log 2>&1
el "alltoall GIN rc=$? $(grep -a -h 'Out of bounds' $A/alltoall_gin.log | awk '{print $7,$8}') | $(grep -a -h -o 'RMA/Plugin: [^,]*tcpxr[^,]*\|GIN/Plugin: Assigned[^,]*' $A/alltoall_gin.log | sort -u | tr '\n' ';') $(grep -a -h 'WARN' $A/alltoall_gin.log | head -2 | cut -c1-250)"
