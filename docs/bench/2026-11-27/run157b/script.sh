#!/bin/bash
# run157b (the 4-GPU host of run157, right after it, NCCL 2.12.12 and its nccl-tests built there by
# run157): does NCCL 2.12.12 run on this machine at all? all_reduce -c 1 8 B-1 MiB at 2 ranks on
# GPUs 0,1 (no MPS), over NCCL's own Socket and over tcpxr (socket.log, tcpxr.log); then over Socket
# with each protocol forced (Simple.log, LL.log, LL128.log): each failed; then one process driving 2 GPUs
# (single.log: did not run, this script left one GPU visible). Every run over the net: "an illegal
# memory access was encountered" in NCCL's kernel, after "Init COMPLETE".
A=$OUT/d; mkdir -p $A
for cfg in socket tcpxr; do if [ $cfg = tcpxr ]; then X=(-x NCCL_NET=tcpxr -x NCCL_NET_PLUGIN=tcpxr); else X=(-x NCCL_NET=Socket -x NCCL_NET_PLUGIN=none); fi
  timeout 60 mpirun --allow-run-as-root --bind-to none -np 2 -x CUDA_VISIBLE_DEVICES=0,1 -x LD_LIBRARY_PATH=/tmp/nccl-2.12.12/lib:$PWD/dist:/usr/local/cuda/lib64 -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 -x NCCL_SOCKET_IFNAME=lo -x NCCL_NVLS_ENABLE=0 -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,NET "${X[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh /tmp/nt-2.12.12/build/all_reduce_perf -b 8 -e 1M -f 4 -n 3 -w 1 -c 1 -g 1 > $A/$cfg.log 2>&1; echo "$cfg rc=$?"; done
for p in Simple LL LL128; do timeout 40 mpirun --allow-run-as-root --bind-to none -np 2 -x CUDA_VISIBLE_DEVICES=0,1 -x NCCL_PROTO=$p -x LD_LIBRARY_PATH=/tmp/nccl-2.12.12/lib:$PWD/dist:/usr/local/cuda/lib64 -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 -x NCCL_SOCKET_IFNAME=lo -x NCCL_NVLS_ENABLE=0 -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,NET -x NCCL_NET=Socket sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh /tmp/nt-2.12.12/build/all_reduce_perf -b 8 -e 1M -f 4 -n 3 -w 1 -c 1 -g 1 > $A/$p.log 2>&1; echo "$p rc=$?"; done
timeout 40 mpirun --allow-run-as-root -np 1 -x CUDA_VISIBLE_DEVICES=0 -x LD_LIBRARY_PATH=/tmp/nccl-2.12.12/lib:/usr/local/cuda/lib64 /tmp/nt-2.12.12/build/all_reduce_perf -b 8 -e 1M -f 4 -n 3 -c 1 -g 2 > $A/single.log 2>&1; echo "1proc 2gpu rc=$?"
