#!/bin/bash
# run165 (the 4-GPU host of run164, right after it, NCCL 2.30.7 and nccl-tests built there by run164;
# 889352e's library): where GIN's floor at small sizes goes. alltoall_perf -R 2 -D 3 at 8 B-1 KiB,
# 200 iterations, -c 0, at 4 then 2 ranks, with NCCL_TCPXR_STATS=1 and NCCL's whole INFO log.
A=/tmp/run165; mkdir -p $A; LIB=$PWD/dist/libnccl-net-tcpxr.so
for np in 4 2; do timeout 120 mpirun --allow-run-as-root --bind-to none -np $np -x CUDA_VISIBLE_DEVICES=0,1,2,3 -x NCCL_NET_PLUGIN=$LIB -x NCCL_RMA_PLUGIN=$LIB -x NCCL_TCPXR_RMA=1 -x NCCL_GIN_TYPE=2 -x NCCL_TCPXR_STATS=1 -x NCCL_SOCKET_IFNAME=lo -x NCCL_TCPXR_IFNAME=lo -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 -x NCCL_NVLS_ENABLE=0 -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=ALL -x LD_LIBRARY_PATH=/tmp/nccl-2.30.7/lib:$LD_LIBRARY_PATH sh -c 'NCCL_HOSTID="g${OMPI_COMM_WORLD_RANK}" exec "$@"' sh /tmp/nt-2.30.7/build/alltoall_perf -b 8 -e 1K -f 4 -R 2 -D 3 -c 0 -n 200 -w 10 -g 1 > $A/gin$np-small.log 2>&1; echo "np=$np rc=$?"; done
tar cJf $OUT/run165.tar.xz -C /tmp run165
