#!/bin/bash
# run392 (one H200, session 48): run 391 found the one-step gap in the messages' transit, not in
# the ranks' turnaround (2 ranks, all_gather of 32 B: transit 4.8-6.5 us against Socket's 3.7-4.7,
# turnaround 9.9-10.6 against 10.2-12.0; hops.py). Transit holds the receiver's polling delay, and
# runs 308 and 351 had counted NCCL's proxy polling about half as often per operation over tcpxr.
# Here every recvfrom of the two shapes (failed polls too, with its socket) and every sched_yield
# (one per idle pass of NCCL's proxy loop) is an event besides the writes, so the poll period
# around each message's arrival is seen. Same shapes, library and order as run 391, traced only,
# -n 1000 -w 200 (A) and -n 500 -w 100 (B).
cd "$(dirname "$0")/.."; A=/tmp/run392; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c78: $(cat dist/c78/commit.txt)" >> $A/machine.txt
export LD_LIBRARY_PATH=$PWD/dist/prof/lib:$LD_LIBRARY_PATH; PERF=$PWD/dist/prof/perf
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
$PERF --version >> $A/machine.txt 2>&1
mps_on
launch(){ local v=$1 np=$2 op=$3 size=$4 n=$5
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN LD_LIBRARY_PATH=$LD_LIBRARY_PATH)
  case $v in socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);; *) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/$v/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0);; esac
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 90 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/${op}_perf -b $size -e $size -n $n -w $((n/5)) -c 0 -g 1; }
for pass in 1 2; do
  vs="c78 socket"; [ $pass = 2 ] && vs="socket c78"
  for shape in A B; do
    case $shape in A) np=2 op=all_gather size=32 N=1000;; B) np=4 op=all_reduce size=8 N=500;; esac
    for v in $vs; do
      tag=$shape-$v-$pass
      $PERF record -a -q -o /tmp/$tag.data -e syscalls:sys_enter_writev -e syscalls:sys_enter_sendto \
        -e syscalls:sys_enter_recvfrom -e syscalls:sys_exit_recvfrom -e syscalls:sys_enter_sched_yield -m 8M -- sleep 60 > $A/$tag-perf.err 2>&1 & P=$!; sleep 2
      launch $v $np $op $size $N > $A/$tag-traced.log 2>&1; rc=$?
      kill -INT $P; wait $P
      $PERF script -i /tmp/$tag.data --ns -F comm,pid,tid,cpu,time,event,trace 2>/dev/null | grep -v "^ *mpirun\|orted\|prted" 2>>$A/$tag-perf.err | xz -6 > $A/$tag-events.txt.xz
      el "$tag traced rc=$rc $size B: $(awk -v s=$size '$1==s{print $6}' $A/$tag-traced.log) us; events $(xzcat $A/$tag-events.txt.xz | wc -l)"
      rm -f /tmp/$tag.data
    done
  done
done
mps_off
el done
