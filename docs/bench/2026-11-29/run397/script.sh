#!/bin/bash
# run397 (one H200, session 48): run 392's shape A (2 ranks on GPU 0 under MPS, all_gather of 32 B,
# -n 1000 -w 200, every write, recvfrom and sched_yield under a system-wide perf record) with the
# library as committed (dist/c80 = e36cb32e, exact control reads) beside main (dist/c78) and
# Socket default, one pass each: does the payload now land as early as Socket's (landing.py)?
# The events files go straight to $OUT.
cd "$(dirname "$0")/.."; A=/tmp/run397; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; for c in c78 c80; do echo "$c: $(cat dist/$c/commit.txt)" >> $A/machine.txt; done
export LD_LIBRARY_PATH=$PWD/dist/prof/lib:$LD_LIBRARY_PATH; PERF=$PWD/dist/prof/perf
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
mps_on
launch(){ local v=$1
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN LD_LIBRARY_PATH=$LD_LIBRARY_PATH)
  case $v in socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);; *) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/$v/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0);; esac
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 60 mpirun --allow-run-as-root --bind-to none -np 2 "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/all_gather_perf -b 32 -e 32 -n 1000 -w 200 -c 0 -g 1; }
for v in c80 socket c78; do tag=A-$v
  $PERF record -a -q -o /tmp/$tag.data -e syscalls:sys_enter_writev -e syscalls:sys_enter_sendto \
    -e syscalls:sys_enter_recvfrom -e syscalls:sys_exit_recvfrom -e syscalls:sys_enter_sched_yield -m 8M -- sleep 60 > $A/$tag-perf.err 2>&1 & P=$!; sleep 2
  launch $v > $A/$tag-traced.log 2>&1; rc=$?
  kill -INT $P; wait $P
  $PERF script -i /tmp/$tag.data --ns -F comm,pid,tid,cpu,time,event,trace 2>/dev/null | grep -v "^ *mpirun\|orted\|prted" | xz -3 > $OUT/$tag-events.txt.xz
  el "$tag traced rc=$rc 32 B: $(awk '$1==32{print $6}' $A/$tag-traced.log) us"
  rm -f /tmp/$tag.data; cp $A/steps.txt $OUT/
done
mps_off
el done
cp $A/steps.txt $A/machine.txt $A/*traced.log $OUT/ 2>/dev/null
