#!/bin/bash
# run162 (4-GPU host, 0bc821a), issue 32 on the lanes code (6831d6c) with the RMA counters
# (NCCL_TCPXR_STATS=1): NCCL 2.30.7 built from its tag, nccl-tests and put_signal.c against it;
# tests/rma.rs's GPU tests (default connections, GPU 3) and its one-queue refusal; GIN
# (alltoall_perf -R 2 -D 3, -b 16 -e 256M -f 4, so 256 MiB is a size) and ncclPutSignal (8 B-256 MiB)
# at 2 ranks (GPUs 0,1) and 4 (one per GPU), each its own NCCL host, no MPS, -c 1; NCCL's alltoall
# over tcpxr and over Socket at the same sizes; GIN at 4 ranks with NCCL_TCPXR_STRIPES=1 (one
# connection per pair) against the default 4, 1-256 MiB; last, MPS on: the MPS refusal test.
# In the background: nccl-tests against the system's NCCL 2.28.3 in /tmp/nt-2.28.3 for run163.
cd "$(dirname "$0")/.."; A=/tmp/run162; source dist/common.sh
export CUDA_VISIBLE_DEVICES=0,1,2,3
fin(){ tar cJf $R/run162.tar.xz -C /tmp run162; }; trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
(JOBS=40 timeout 300 bash dist/build_nccl.sh dist/nccl-src/v2.30.7-1 /tmp/nccl-2.30.7 > $A/nccl-2.30.7-build.txt 2>&1; el "NCCL 2.30.7 build rc=$?") &
BUILD=$!
build_tests_in /tmp/nt-2.28.3 /usr 12 &
R1(){ local name=$1; shift; ( export TCPXR_REQUIRE_GPU=1 NCCL_TCPXR_IFNAME=lo CUDA_VISIBLE_DEVICES=3 "$@"; timeout 200 dist/deps/rma --include-ignored --test-threads=1 --nocapture ${TESTS:-} ) > $A/$name.txt 2>&1; el "$name rc=$? $(grep -h 'test result' $A/$name.txt)"; }
( R1 rma-default; TESTS=one_hardware_queue_means_no_rma_device_and_a_warn_saying_why R1 rma-1queue CUDA_DEVICE_MAX_CONNECTIONS=1 ) &
RMAPID=$!
wait $BUILD
build_tests_in /tmp/nt-2.30.7 /tmp/nccl-2.30.7 40
gcc -O2 -o /tmp/put_signal ncclTests/gin/put_signal.c -I/tmp/nccl-2.30.7/include -I/usr/local/cuda/include -L/tmp/nccl-2.30.7/lib -L/usr/local/cuda/lib64 -lnccl -lcudart; el "put_signal build rc=$?"
LIB=$PWD/dist/libnccl-net-tcpxr.so
GENV=(NCCL_NET_PLUGIN=$LIB NCCL_RMA_PLUGIN=$LIB NCCL_TCPXR_RMA=1 NCCL_GIN_TYPE=2 NCCL_TCPXR_STATS=1 NCCL_SOCKET_IFNAME=lo NCCL_TCPXR_IFNAME=lo NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV LD_LIBRARY_PATH=/tmp/nccl-2.30.7/lib:$LD_LIBRARY_PATH)
XS=(); for kv in "${GENV[@]}"; do XS+=(-x "$kv"); done
RMA_LINES='RMA/Plugin: [^,]*tcpxr[^,]*\|GIN/Plugin: [^,]*'
ginrun(){ local name=$1 np=$2 vis=$3 b=$4; shift 4
  timeout 200 mpirun --allow-run-as-root --bind-to none -np $np -x CUDA_VISIBLE_DEVICES=$vis "${XS[@]}" "$@" sh -c 'NCCL_HOSTID="g${OMPI_COMM_WORLD_RANK}" exec "$@"' sh /tmp/nt-2.30.7/build/alltoall_perf -b $b -e 256M -f 4 -R 2 -D 3 -c 1 -n 5 -w 2 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(grep -a -h 'Out of bounds' $A/$name.log | awk '{print $7,$8}') | $(grep -a -h -o "$RMA_LINES" $A/$name.log | sort -u | tr '\n' ';') $(grep -a -h WARN $A/$name.log | head -2 | cut -c1-250)"; }
gin(){ local np=$1 vis=$2
  rm -f /tmp/ps.id; for r in $(seq 0 $((np-1))); do env "${GENV[@]}" CUDA_VISIBLE_DEVICES=$r NCCL_HOSTID=g$r timeout 200 /tmp/put_signal $r $np /tmp/ps.id $((256<<20)) 5 > $A/put_signal-$np.$r.log 2>&1 & done; wait $(jobs -p | grep -v "^$RMAPID$")
  el "put_signal $np ranks: $(grep -a -h 'PASS\|FAIL' $A/put_signal-$np.*.log | cut -c1-200 | tr '\n' ' ') | $(grep -a -h -o "$RMA_LINES" $A/put_signal-$np.0.log | sort -u | tr '\n' ';')"
  ginrun alltoall_gin-$np $np $vis 16
  for cfg in tcpxr socket; do if [ $cfg = tcpxr ]; then X=(-x NCCL_NET=tcpxr -x NCCL_NET_PLUGIN=$LIB); else X=(-x NCCL_NET=Socket -x NCCL_NET_PLUGIN=none); fi
    timeout 150 mpirun --allow-run-as-root --bind-to none -np $np -x CUDA_VISIBLE_DEVICES=$vis -x LD_LIBRARY_PATH=/tmp/nccl-2.30.7/lib:$LD_LIBRARY_PATH -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 -x NCCL_SOCKET_IFNAME=lo -x NCCL_NVLS_ENABLE=0 -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,NET "${X[@]}" sh -c 'NCCL_HOSTID="g${OMPI_COMM_WORLD_RANK}" exec "$@"' sh /tmp/nt-2.30.7/build/alltoall_perf -b 16 -e 256M -f 4 -c 1 -n 5 -w 2 -g 1 > $A/alltoall_$cfg-$np.log 2>&1; el "alltoall $cfg $np ranks rc=$? $(grep -a -h 'Out of bounds' $A/alltoall_$cfg-$np.log | awk '{print $7,$8}')"; done; }
gin 2 0,1
wait $RMAPID
gin 4 0,1,2,3
ginrun alltoall_gin-4-stripes1 4 0,1,2,3 1M -x NCCL_TCPXR_STRIPES=1
ginrun alltoall_gin-4-stripes4 4 0,1,2,3 1M -x NCCL_TCPXR_STRIPES=4
mps_on
( export TCPXR_REQUIRE_GPU=1 TCPXR_EXPECT_MPS=1 NCCL_TCPXR_IFNAME=lo CUDA_VISIBLE_DEVICES=0; timeout 100 dist/deps/rma --include-ignored --test-threads=1 --nocapture gpu_rma_is_refused_under_mps ) > $A/rma-mps.txt 2>&1; el "rma-mps rc=$? $(grep -h 'test result' $A/rma-mps.txt)"
mps_off
grep -a -h -o "RMA stats.*" $A/*.log | cut -c1-400 | head -40 > $A/rma-stats.txt
el done
