#!/bin/bash
# run305 (a 4-GPU host, one rank per GPU): does the tree run slower once the ring's LL has run in
# the process (run 303: the tree's 32 KiB 11-18 % slower after the ring's 8-16 KiB)? nccl-tests
# all_reduce 8 B-64 KiB with -N 3 (the sweep three times in one process, so cycles 2-3 run the
# tree's small sizes after the ring's), 200 iterations, host buffers, -c 1, at 4 and 3 ranks:
# main 5ceedb9e (dist/c41), dist/c42 (the ring's LL for shares 2 KiB to under 16 KiB), dist/c40
# (2 to under 8 KiB: the tree's 32 KiB after the ring), Socket's default; two passes, the order
# rotated.
cd "$(dirname "$0")/.."; A=/tmp/run305; source dist/common.sh
start_run; for c in c40 c41 c42; do echo "$c: $(cat dist/$c/commit.txt)"; done >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
cyc(){ local name=$1 np=$2 lib=$3
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET)
  case $lib in
    socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);;
    *) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/$lib/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0);;
  esac
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((np-1))) timeout 60 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/all_reduce_perf -b 8 -e 64K -f 2 -n 200 -w 20 -N 3 -c 1 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(grep -m1 -o 'Loaded net plugin [^ ]*\|Using network [A-Za-z]*' $A/$name.log | head -1) 32K: $(awk '/^ +32768 /{printf "%s ", $6}' $A/$name.log)"; }
for np in 4 3; do
  set -- c41 c42 c40 socket
  for pass in 1 2; do
    for lib in "$@"; do cyc r$np-$lib-$pass $np $lib; done
    set -- socket c40 c42 c41
  done
done
el "wrong: $(grep -h 'Out of bounds values' $A/*.log 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
