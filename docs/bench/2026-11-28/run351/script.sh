#!/bin/bash
# run351 (2x H200, 2 ranks one per GPU; prepared in session 41, not run): the one-step gap (all_gather
# of 32 B at 2 ranks: tcpxr 15.5-16.3 us against Socket default's 14.0-14.7, runs 343, 345, 349;
# not NCCL's proxy appending late, not tcpxr's tuner or I/O pool). Socket does all its I/O in test
# (its isend and irecv only take a request), tcpxr sends at isend: NCCL runs the same passes over
# both (net.cc). Run 308 found NCCL's proxy polling half as often per operation over tcpxr (at 4
# ranks). Where do the proxy thread's microseconds go? For each transport, twice alternated:
# all_gather_perf -b 32 -e 32 -n 20000 -w 200 -c 0 under a system-wide `perf sched record`
# (dist/prof's perf), then `perf sched latency` (each thread's run time, context switches, and
# its waits for a core after a wake-up) and per rank `perf stat` of the system calls NCCL's
# threads make (-n 40000 less -n 20000: one all_gather's share, as run 308).
cd "$(dirname "$0")/.."; A=/tmp/run351; source dist/common.sh
start_run; echo "c53: $(cat dist/c53/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
export LD_LIBRARY_PATH=$PWD/dist/prof/lib:$LD_LIBRARY_PATH; PERF=$PWD/dist/prof/perf
EV=$(for s in recvfrom sendto recvmsg sendmsg writev epoll_wait poll sched_yield futex; do printf 'syscalls:sys_enter_%s,' $s; done)context-switches,cpu-migrations
launch(){ local v=$1 n=$2 tag=$3 wrap=$4
  env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN LD_LIBRARY_PATH=$LD_LIBRARY_PATH)
  case $v in socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);; *) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/$v/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0);; esac
  xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  CUDA_VISIBLE_DEVICES=0,1 timeout 60 mpirun --allow-run-as-root --bind-to none -np 2 "${xs[@]}" -x A=$A -x EV=$EV -x PERF=$PERF -x V=$v-$n-$tag sh -c "$wrap" sh \
    $NT/all_gather_perf -b 32 -e 32 -n $n -w 200 -c 0 -g 1; }
PLAIN='NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"'
STAT='NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec $PERF stat -x, -e $EV -o $A/stat-$V-$OMPI_COMM_WORLD_RANK.txt "$@"'
for pass in 1 2; do for v in c53 socket; do
  $PERF sched record -a -q -o $A/sched-$v-$pass.data -- sleep 80 > $A/sched-$v-$pass.err 2>&1 & P=$!; sleep 2
  launch $v 20000 plain "$PLAIN" > $A/$v-$pass.log 2>&1; rc=$?
  kill -INT $P; wait $P
  el "$v pass $pass rc=$rc 32B $(awk '/^ +32 /{print $6}' $A/$v-$pass.log) us; sched data $(du -m $A/sched-$v-$pass.data | cut -f1) MB"
  $PERF sched latency -p -i $A/sched-$v-$pass.data --sort runtime 2>/dev/null | head -60 > $A/latency-$v-$pass.txt
  rm -f $A/sched-$v-$pass.data
  for n in 40000 20000; do launch $v $n stat "$STAT" > $A/stat-$v-$n-$pass.log 2>&1
    el "$v -n $n rc=$? 32B $(awk '/^ +32 /{print $6}' $A/stat-$v-$n-$pass.log) us; rank 0: $(grep -v '^#' $A/stat-$v-$n-stat-0.txt 2>/dev/null | awk -F, 'NF>2{printf "%s=%s ", $3, $1}' | sed 's/syscalls:sys_enter_//g')"
    for r in 0 1; do mv $A/stat-$v-$n-stat-$r.txt $A/stat-$v-$n-$pass-$r.txt 2>/dev/null; done
  done
done; done
el done
