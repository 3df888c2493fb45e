#!/bin/bash
# run176c: part C of run176 again on the same warm machine (run176's pc() left out NCCL_TESTS_DEVICE=0, so nccl-tests refused 2 ranks on one GPU).
cd "$(dirname "$0")/.."; A=/tmp/run176c; source dist/common.sh
trap "tar cJf $R/run176c.tar.xz -C /tmp run176c" EXIT; NT=/tmp/nt-2.28.3/build; export CUDA_VISIBLE_DEVICES=0
mps_on
pc(){ local name=$1 lib=$2 op=$3
  timeout 90 taskset -c 0-15 mpirun --allow-run-as-root --bind-to none -np 2 -x CUDA_VISIBLE_DEVICES=0 -x NCCL_TESTS_DEVICE=0 -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 -x NCCL_SOCKET_IFNAME=lo -x NCCL_NVLS_ENABLE=0 -x NCCL_NET=tcpxr -x NCCL_NET_PLUGIN=tcpxr -x LD_LIBRARY_PATH=$PWD/$lib:$LD_LIBRARY_PATH -x NCCL_TCPXR_GPU_BUFFERS=0 -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,NET,ENV sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/${op}_perf -b 256K -e 256M -f 4 -n 10 -w 3 -c 0 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$name.log) | $(grep -a -m1 -o 'auto: [0-9]* threads on [0-9]* cores' $A/$name.log)"; }
for i in 1 2; do for op in all_reduce sendrecv; do pc c$i-$op-old dist $op; pc c$i-$op-new dist/new $op; done; done
mps_off
el done
