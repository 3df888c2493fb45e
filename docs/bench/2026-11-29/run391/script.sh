#!/bin/bash
# run391 (one H200, session 48): where a small collective's microseconds go, message by message.
# Earlier runs counted system calls (runs 308, 351: tcpxr's proxy polls about half as often per
# operation as Socket's) and sampled where the CPU goes (runs 312, 318: no hot spot of tcpxr's),
# but never timed each message. Here every message's send (writev: tcpxr, sendto: Socket) and every
# read that returns bytes (recvfrom > 0) is a timestamped event of a system-wide `perf record`
# (dist/prof's perf). Per message then: its transit (the sender's write to the receiver's first
# read of it, which holds the receiver's polling delay) and each rank's turnaround (its read to
# its next write: NCCL's kernel, launch and proxy). Both shapes on GPU 0 under MPS, host buffers,
# dist/c78 (main 64c3d1e1) against Socket default, two passes in alternated order:
#  A. 2 ranks, all_gather_perf -b 32 -e 32 (the one-step gap: 0.89-0.93 of Socket's time)
#  B. 4 ranks, all_reduce_perf -b 8 -e 8 (0.77-0.88)
# each first untraced (-n 20000 -w 500: the times) then traced (-n 4000 -w 500).
cd "$(dirname "$0")/.."; A=/tmp/run391; source dist/common.sh
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
    $NT/${op}_perf -b $size -e $size -n $n -w 500 -c 0 -g 1; }
for pass in 1 2; do
  vs="c78 socket"; [ $pass = 2 ] && vs="socket c78"
  for shape in A B; do
    case $shape in A) np=2 op=all_gather size=32;; B) np=4 op=all_reduce size=8;; esac
    for v in $vs; do
      tag=$shape-$v-$pass
      launch $v $np $op $size 20000 > $A/$tag.log 2>&1
      el "$tag plain rc=$? $size B: $(awk -v s=$size '$1==s{print $6}' $A/$tag.log) us"
      $PERF record -a -q -o /tmp/$tag.data -e syscalls:sys_enter_writev -e syscalls:sys_enter_sendto \
        -e syscalls:sys_exit_recvfrom --filter 'ret > 0' -- sleep 60 > $A/$tag-perf.err 2>&1 & P=$!; sleep 2
      launch $v $np $op $size 4000 > $A/$tag-traced.log 2>&1; rc=$?
      kill -INT $P; wait $P
      $PERF script -i /tmp/$tag.data -F comm,pid,tid,cpu,time,event,trace 2>/dev/null | grep -v "^ *mpirun\|orted\|prted" 2>>$A/$tag-perf.err | xz -6 > $A/$tag-events.txt.xz
      el "$tag traced rc=$rc $size B: $(awk -v s=$size '$1==s{print $6}' $A/$tag-traced.log) us; events $(xzcat $A/$tag-events.txt.xz | wc -l)"
      rm -f /tmp/$tag.data
    done
  done
done
mps_off
el done
