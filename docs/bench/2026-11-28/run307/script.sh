#!/bin/bash
# run307 (a 4-GPU host, 4 ranks one per GPU): which threads run while small all_reduces repeat?
# (tcpxr's small sizes at 4 ranks trail Socket's by 5-10 us, and slow by 5 % once the ring's
# connections exist, run 305.) all_reduce 8 B-64 KiB -N 40, 200 iterations, -c 0, host buffers;
# per-thread CPU time and context switches of every rank over 3 s of the steady state
# (dist/threads.py): main (dist/c41), dist/c42 (the ring's LL for 2-16 KiB shares), Socket.
cd "$(dirname "$0")/.."; A=/tmp/run307; source dist/common.sh
start_run; for c in c41 c42; do echo "$c: $(cat dist/$c/commit.txt)"; done >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
for v in c41 c42 socket; do
  env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN)
  case $v in socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);; *) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/$v/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0);; esac
  xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  python3 dist/threads.py 5 3 > $A/threads-$v.txt 2>&1 &
  CUDA_VISIBLE_DEVICES=0,1,2,3 timeout 90 mpirun --allow-run-as-root --bind-to none -np 4 "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/all_reduce_perf -b 8 -e 64K -f 2 -n 200 -w 20 -N 40 -c 0 -g 1 > $A/$v.log 2>&1
  rc=$?; wait
  el "$v rc=$rc 8B cycles: $(awk '/^ +8 /{printf "%s ", $6}' $A/$v.log | cut -c1-120)"
  sed -n '/-- per/,$p' $A/threads-$v.txt | tee -a $A/steps.txt
done
el done
