#!/bin/bash
# run426 (one H200, session 53): where sendrecv's 8 B operation spends the 1-2 us it trails Socket
# by (run 424: 0.95-0.98 at 2 ranks, 0.93-0.95 at 4). Every system call of the ranks is an event
# of a system-wide perf record (raw_syscalls enter and exit, perf's own filtered out); per rank
# and thread, calls per operation and time inside them, and per message its transit, the
# receiver's poll period and turnaround (dist/a426/syscalls.py). 2 and 4 ranks, sendrecv_perf
# -b 8 -e 8, GPU 0 under MPS, host buffers, dist/c97 (main 340cb0c0) against Socket default, two
# passes alternated: each first untraced (-n 20000 -w 1000: the time) then traced (-n 2000 -w 200).
# Then the GPU test binaries of c97 (the head's first GPU run).
cd "$(dirname "$0")/.."; A=/tmp/run426; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c97: $(cat dist/c97/commit.txt)" >> $A/machine.txt
export LD_LIBRARY_PATH=$PWD/dist/prof/lib:$LD_LIBRARY_PATH; PERF=$PWD/dist/prof/perf
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
cp dist/a426/syscalls.py $A/
mps_on
launch(){ local v=$1 np=$2 n=$3 w=$4
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN LD_LIBRARY_PATH=$LD_LIBRARY_PATH)
  case $v in socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);; *) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/$v/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0);; esac
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 90 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/sendrecv_perf -b 8 -e 8 -n $n -w $w -c 0 -g 1; }
for pass in 1 2; do
  vs="c97 socket"; [ $pass = 2 ] && vs="socket c97"
  for np in 2 4; do
    for v in $vs; do
      tag=$np-$v-$pass
      launch $v $np 20000 1000 > $A/$tag.log 2>&1
      el "$tag plain rc=$? 8 B: $(awk '$1==8{print $6}' $A/$tag.log) us"
      sh -c 'exec '$PERF' record -a -q -o /tmp/'$tag'.data -e raw_syscalls:sys_enter --filter "common_pid != $$" -e raw_syscalls:sys_exit --filter "common_pid != $$" -m 16M -- sleep 60' > $A/$tag-perf.err 2>&1 & P=$!; sleep 2
      launch $v $np 2000 200 > $A/$tag-traced.log 2>&1; rc=$?
      kill -INT $P; wait $P
      $PERF script -i /tmp/$tag.data --ns -F comm,pid,tid,cpu,time,event,trace 2>/dev/null | grep -v "^ *mpirun\|orted\|prted" > /tmp/$tag.txt
      el "$tag traced rc=$rc 8 B: $(awk '$1==8{print $6}' $A/$tag-traced.log) us; events $(wc -l < /tmp/$tag.txt)"
      python3 dist/a426/syscalls.py /tmp/$tag.txt 2200 > $A/$tag-calls.txt 2>&1; el "$tag analysed rc=$?"
      [ $pass = 1 ] && [ $np = 2 ] && xz -3 -T4 -c /tmp/$tag.txt > $A/$tag-events.txt.xz
      rm -f /tmp/$tag.data /tmp/$tag.txt
    done
  done
done
mps_off
gpu_tests dist/c97
el done
