#!/bin/bash
# run158 (the 4-GPU host of run157, right after it; NCCL 2.30.7 and nccl-tests built there by run157
# in /tmp), issue 32, no MPS: tests/rma.rs's GPU tests (default connections, GPU3), the 1-queue
# refusal in its own process; NCCL 2.30.7's ncclPutSignal/ncclWaitSignal (ncclTests/gin/put_signal.c,
# 8 B-256 MiB) and alltoall_perf -R 2 -D 3 (GIN kernels over tcpxr's RMA, 8 B-256 MiB) at 2 ranks
# (GPUs 0,1) then 4 ranks (one per GPU), each its own NCCL host, beside NCCL's own alltoall over
# tcpxr and over Socket. Issue 31: tcpxr-bench ring at 2 and 4 ranks, 4 MiB and 512 KiB.
cd "$(dirname "$0")/.."; A=/tmp/run158; source dist/common.sh
export CUDA_VISIBLE_DEVICES=0,1,2,3
fin(){ tar cJf $R/run158.tar.xz -C /tmp run158; }; trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
R1(){ local name=$1; shift; ( export TCPXR_REQUIRE_GPU=1 NCCL_TCPXR_IFNAME=lo CUDA_VISIBLE_DEVICES=3 "$@"; timeout 200 dist/deps/rma --include-ignored --test-threads=1 --nocapture ${TESTS:-} ) > $A/$name.txt 2>&1; el "$name rc=$? $(grep -h 'test result' $A/$name.txt)"; }
( R1 rma-default; TESTS=one_hardware_queue_means_no_rma_device_and_a_warn_saying_why R1 rma-1queue CUDA_DEVICE_MAX_CONNECTIONS=1 ) &
RMAPID=$!
gcc -O2 -o /tmp/put_signal ncclTests/gin/put_signal.c -I/tmp/nccl-2.30.7/include -I/usr/local/cuda/include -L/tmp/nccl-2.30.7/lib -L/usr/local/cuda/lib64 -lnccl -lcudart; el "put_signal build rc=$?"
LIB=$PWD/dist/libnccl-net-tcpxr.so
GENV=(NCCL_NET_PLUGIN=$LIB NCCL_RMA_PLUGIN=$LIB NCCL_TCPXR_RMA=1 NCCL_GIN_TYPE=2 NCCL_SOCKET_IFNAME=lo NCCL_TCPXR_IFNAME=lo NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV LD_LIBRARY_PATH=/tmp/nccl-2.30.7/lib:$LD_LIBRARY_PATH)
XS=(); for kv in "${GENV[@]}"; do XS+=(-x "$kv"); done
gin(){ local np=$1 vis=$2
  rm -f /tmp/ps.id; for r in $(seq 0 $((np-1))); do env "${GENV[@]}" CUDA_VISIBLE_DEVICES=$r NCCL_HOSTID=g$r timeout 120 /tmp/put_signal $r $np /tmp/ps.id $((256<<20)) 5 > $A/put_signal-$np.$r.log 2>&1 & done; wait $(jobs -p | grep -v "^$RMAPID$")
  el "put_signal $np ranks: $(grep -a -h 'PASS\|FAIL' $A/put_signal-$np.*.log | cut -c1-200 | tr '\n' ' ') | $(grep -a -h -o 'RMA/Plugin: [^,]*tcpxr[^,]*' $A/put_signal-$np.0.log | sort -u | tr '\n' ';')"
  timeout 150 mpirun --allow-run-as-root --bind-to none -np $np -x CUDA_VISIBLE_DEVICES=$vis "${XS[@]}" sh -c 'NCCL_HOSTID="g${OMPI_COMM_WORLD_RANK}" exec "$@"' sh /tmp/nt-2.30.7/build/alltoall_perf -b 8 -e 256M -f 4 -R 2 -D 3 -c 1 -n 5 -w 2 -g 1 > $A/alltoall_gin-$np.log 2>&1
  el "alltoall GIN $np ranks rc=$? $(grep -a -h 'Out of bounds' $A/alltoall_gin-$np.log | awk '{print $7,$8}') | $(grep -a -h -o 'RMA/Plugin: [^,]*tcpxr[^,]*\|GIN/Plugin: [^,]*' $A/alltoall_gin-$np.log | sort -u | tr '\n' ';') $(grep -a -h WARN $A/alltoall_gin-$np.log | head -2 | cut -c1-250)"
  for cfg in tcpxr socket; do if [ $cfg = tcpxr ]; then X=(-x NCCL_NET=tcpxr -x NCCL_NET_PLUGIN=$LIB); else X=(-x NCCL_NET=Socket -x NCCL_NET_PLUGIN=none); fi
    timeout 120 mpirun --allow-run-as-root --bind-to none -np $np -x CUDA_VISIBLE_DEVICES=$vis -x LD_LIBRARY_PATH=/tmp/nccl-2.30.7/lib:$LD_LIBRARY_PATH -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 -x NCCL_SOCKET_IFNAME=lo -x NCCL_NVLS_ENABLE=0 -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,NET "${X[@]}" sh -c 'NCCL_HOSTID="g${OMPI_COMM_WORLD_RANK}" exec "$@"' sh /tmp/nt-2.30.7/build/alltoall_perf -b 8 -e 256M -f 4 -c 1 -n 5 -w 2 -g 1 > $A/alltoall_$cfg-$np.log 2>&1; el "alltoall $cfg $np ranks rc=$? $(grep -a -h 'Out of bounds' $A/alltoall_$cfg-$np.log | awk '{print $7,$8}')"; done; }
gin 2 0,1
wait $RMAPID
gin 4 0,1,2,3
for np in 2 4; do for s in 4M 512K; do timeout 40 dist/tcpxr-bench ring --ranks $np --size $s --seconds 5 > $A/ring-$np-$s.txt 2>&1; el "ring $np $s rc=$?"; done; done
el done
