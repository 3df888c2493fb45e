#!/bin/bash
# run200 (a 2-GPU host; 2026-11-27, twenty-second session): does NCCL_TCPXR_STATS=1, which
# ncclTests/configs.py turns on for every tcpxr config, cost time? 1af520f (dist/new) with and
# without it, and Socket default, alternated three times: all_gather and sendrecv 32 B-64 KiB,
# 2 ranks one per GPU, -n 200 -w 20 -c 0, NCCL_DEBUG=WARN (INFO,NET with STATS, as the runner has).
cd "$(dirname "$0")/.."; A=/tmp/run200; source dist/common.sh
export CUDA_VISIBLE_DEVICES=0,1; trap "tar cJf $R/run200.tar.xz -C /tmp run200" EXIT
{ date -u; nvidia-smi -L; nproc; cat dist/new/commit.txt; uptime; } > $A/machine.txt 2>&1
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 32
one(){ local name=$1 op=$2 net=$3; shift 3
  local env=(CUDA_VISIBLE_DEVICES=0,1 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN)
  case $net in tcpxr) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/dist/new:$LD_LIBRARY_PATH NCCL_TCPXR_GPU_BUFFERS=0);;
    socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);; esac
  env+=("$@"); local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 60 mpirun --allow-run-as-root --bind-to none -np 2 "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/${op}_perf -b 32 -e 64K -f 4 -n 200 -w 20 -c 0 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$name.log)"; }
for i in 1 2 3; do for op in all_gather sendrecv; do
  one r$i-$op-plain $op tcpxr; one r$i-$op-stats $op tcpxr NCCL_TCPXR_STATS=1 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=NET; one r$i-$op-socket $op socket
done; done
python3 dist/med.py $A/steps.txt all_gather,sendrecv > $A/medians.txt; el "medians rc=$?"
el done
