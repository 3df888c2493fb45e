#!/bin/bash
# run308 (a 4-GPU host, 4 ranks one per GPU): system calls per 8 B all_reduce at 4 ranks, tcpxr
# main (dist/c41) against Socket's default: each rank under `perf stat` (dist/prof's perf) of the
# syscalls it makes most, all_reduce_perf -b 8 -e 8 -w 100 -c 0, -n 40000 and -n 20000: the
# difference over 20,000 is what one all_reduce costs, without init. Host buffers.
cd "$(dirname "$0")/.."; A=/tmp/run308; source dist/common.sh
start_run; echo "c41: $(cat dist/c41/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
EV=$(for s in recvfrom sendto recvmsg sendmsg writev readv read write epoll_wait poll sched_yield futex ioctl; do printf 'syscalls:sys_enter_%s,' $s; done)context-switches
for n in 40000 20000; do for v in c41 socket; do
  env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN LD_LIBRARY_PATH=$PWD/dist/prof/lib:$LD_LIBRARY_PATH)
  case $v in socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);; *) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/$v/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0);; esac
  xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  CUDA_VISIBLE_DEVICES=0,1,2,3 timeout 60 mpirun --allow-run-as-root --bind-to none -np 4 "${xs[@]}" -x A=$A -x V=$v-$n -x EV=$EV -x PERF=$PWD/dist/prof/perf sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec $PERF stat -x, -e $EV -o $A/perf-$V-$OMPI_COMM_WORLD_RANK.txt "$@"' sh \
    $NT/all_reduce_perf -b 8 -e 8 -n $n -w 100 -c 0 -g 1 > $A/$v-$n.log 2>&1
  el "$v -n $n rc=$? 8B $(awk '/^ +8 /{print $6}' $A/$v-$n.log) us; rank 0: $(grep -v '^#' $A/perf-$v-$n-0.txt | awk -F, 'NF>2{printf "%s=%s ", $3, $1}' | sed 's/syscalls:sys_enter_//g')"
done; done
el done
