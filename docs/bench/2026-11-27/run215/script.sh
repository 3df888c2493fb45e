#!/bin/bash
# run215 (a 4-GPU host, 64 cores; 2026-11-27, twenty-fourth session): why more I/O threads cost
# the 4-rank band (run 213: 10 threads a rank 1-10 % more time at 256 KiB-8 MiB than 8, 5-13 % less
# from 64 MiB) and where tcpxr's band time goes against Socket 2x2 (all_reduce 4 MiB 1130-1340 us
# against 896). all_reduce 1 MiB and 4 MiB, all_gather 2 MiB, -n 300 -w 20 -c 0, 4 ranks one per
# GPU, tcpxr (dist/new, a2215065) with NCCL_TCPXR_STATS=1 (the pool's turns: from the hand-off
# queue, found spinning, after a wake-up; each stripe's hand-off waits and chunk times) at 8, 10
# and 12 threads (4 spinners each, set), and Socket 2x2, alternated twice.
cd "$(dirname "$0")/.."; A=/tmp/run215; source dist/common.sh
start_run
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 48
p4(){ local name=$1 op=$2 size=$3 net=$4; shift 4
  local env=(CUDA_VISIBLE_DEVICES=0,1,2,3 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET)
  case $net in
    tcpxr) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/dist/new:$LD_LIBRARY_PATH NCCL_TCPXR_GPU_BUFFERS=0 NCCL_TCPXR_STATS=1 NCCL_TCPXR_IO_SPIN_THREADS=4);;
    socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none NCCL_SOCKET_NTHREADS=2 NCCL_NSOCKS_PERTHREAD=2);;
  esac
  env+=("$@"); local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 60 mpirun --allow-run-as-root --bind-to none -np 4 "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/${op}_perf -b $size -e $size -n 300 -w 20 -c 0 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$name.log) | $(grep -a -o 'stats I/O pool.*' $A/$name.log | head -1 | cut -c1-420)"; }
for i in 1 2; do for c in all_reduce:1M all_reduce:4M all_gather:2M; do op=${c%:*}; s=${c#*:}
  for t in 8 10 12; do p4 r$i-$op-$s-t$t $op $s tcpxr NCCL_TCPXR_IO_THREADS=$t; done
  p4 r$i-$op-$s-socket2x2 $op $s socket
done; done
el done
