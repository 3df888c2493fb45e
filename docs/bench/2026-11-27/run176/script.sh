#!/bin/bash
# run176 (a fresh 4-GPU host), e9261834 (dist/new: hand-offs to a spinning worker through a queue,
# 4 spinners) against 5177c73 (dist: as it was). A: 4 ranks one per GPU, all_reduce and all_gather
# 256 KiB-64 MiB, 30 iterations, -c 0, alternated twice. B: correctness of e9261834 under MPS on
# GPU 0, 3 and 4 ranks, all_reduce with host and with GPU buffers, Ring and Tree forced (-c 1,
# 8 B-32 MiB). C: the one-GPU setup's shape (2 ranks on GPU 0 under MPS, held to 16 cores by
# taskset, so each rank's pool takes that share): all_reduce and sendrecv 256 KiB-256 MiB, 10
# iterations, alternated twice, old and new.
cd "$(dirname "$0")/.."; A=/tmp/run176; source dist/common.sh
start_run
tests_228
PG_SIZES="-b 256K -e 64M" PG_ITERS=30  # pg: common.sh
for i in 1 2; do for op in all_reduce all_gather; do
  pg r$i-$op-old $op host; PGLIB=dist/new pg r$i-$op-new $op host; done; done
export CUDA_VISIBLE_DEVICES=0
mps_on

for np in 3 4; do for buf in host gpu; do for algo in Ring Tree; do
  MAXB=32M nt m$np-$buf-all_reduce-$algo dist/new $np all_reduce $buf $algo CUDA_VISIBLE_DEVICES=0; done; done; done
pc(){ local name=$1 lib=$2 op=$3
  timeout 90 taskset -c 0-15 mpirun --allow-run-as-root --bind-to none -np 2 -x CUDA_VISIBLE_DEVICES=0 -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 -x NCCL_SOCKET_IFNAME=lo -x NCCL_NVLS_ENABLE=0 -x NCCL_NET=tcpxr -x NCCL_NET_PLUGIN=tcpxr -x LD_LIBRARY_PATH=$PWD/$lib:$LD_LIBRARY_PATH -x NCCL_TCPXR_GPU_BUFFERS=0 -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,NET,ENV sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/${op}_perf -b 256K -e 256M -f 4 -n 10 -w 3 -c 0 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$name.log) | $(grep -a -m1 -o 'auto: [0-9]* threads on [0-9]* cores' $A/$name.log)"; }
for i in 1 2; do for op in all_reduce sendrecv; do pc c$i-$op-old dist $op; pc c$i-$op-new dist/new $op; done; done
mps_off
{ uptime; } >> $A/machine.txt 2>&1
el done
