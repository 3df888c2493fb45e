#!/bin/bash
# run288 (a 2-GPU host): 1. tests/gpu_demote.rs of 39b4bd9b (dist/c34; run 287's try lacked
# TCPXR_LOG=info in its children): default, CUDA_DEVICE_MAX_CONNECTIONS=1, MPS. 2. Item 1's small
# sizes at 2 ranks, where tcpxr trails Socket by 2-5 us (run 287): each rank under perf stat
# (system calls by kind, context switches, task clock), all_reduce and sendrecv of 8 B, 20000
# iterations, host buffers, tcpxr and Socket's default alternated twice.
cd "$(dirname "$0")/.."; A=/tmp/run288; source dist/common.sh
start_run; echo "c34: $(cat dist/c34/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
export TCPXR_REQUIRE_GPU=1
t=gpu_demote
CUDA_VISIBLE_DEVICES=0 timeout 60 dist/c34/deps/$t --include-ignored --test-threads=1 > $A/$t-default.txt 2>&1; el "$t default rc=$? $(grep -h '^test result' $A/$t-default.txt)"
CUDA_VISIBLE_DEVICES=0 CUDA_DEVICE_MAX_CONNECTIONS=1 timeout 60 dist/c34/deps/$t --include-ignored --test-threads=1 > $A/$t-1queue.txt 2>&1; el "$t one queue rc=$? $(grep -h '^test result' $A/$t-1queue.txt)"
mps_on; CUDA_VISIBLE_DEVICES=0 timeout 60 dist/c34/deps/$t --include-ignored --test-threads=1 > $A/$t-mps.txt 2>&1; el "$t MPS rc=$? $(grep -h '^test result' $A/$t-mps.txt)"; mps_off
unset TCPXR_REQUIRE_GPU
PROF=$PWD/dist/prof
EV=raw_syscalls:sys_enter,context-switches,task-clock,cpu-migrations
for s in recvfrom sendto recvmsg sendmsg writev readv read write epoll_wait epoll_pwait poll ppoll futex sched_yield ioctl nanosleep clock_nanosleep; do EV=$EV,syscalls:sys_enter_$s; done
# Tracepoints need tracefs: without them, only the software counters.
LD_LIBRARY_PATH=$PROF/lib $PROF/perf stat -e $EV -x, -o $A/probe.stat -- true > $A/probe.txt 2>&1 || EV=context-switches,task-clock,cpu-migrations
el "events: $EV"
st(){ local name=$1 op=$2 net=$3
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,TUNING CUDA_VISIBLE_DEVICES=0,1 PROF=$PROF EV=$EV OUTP=$A/$name)
  case $net in tcpxr) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/dist/c34:$LD_LIBRARY_PATH NCCL_TCPXR_GPU_BUFFERS=0 NCCL_TCPXR_STATS=1);; socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);; esac
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 120 mpirun --allow-run-as-root --bind-to none -np 2 "${xs[@]}" sh -c 'r=$OMPI_COMM_WORLD_RANK; o=$LD_LIBRARY_PATH; NCCL_HOSTID="h$r" exec env LD_LIBRARY_PATH=$PROF/lib $PROF/perf stat -e $EV -x, -o $OUTP.r$r.stat -- env LD_LIBRARY_PATH="$o" "$@"' sh $NT/${op}_perf -b 8 -e 8 -n 20000 -w 200 -c 0 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{print "time_us", $6}' $A/$name.log) r0: $(awk -F, '$3 ~ /raw_syscalls|context-switches|task-clock/ {printf "%s=%s ", $3, $1}' $A/$name.r0.stat)"; }
for p in 1 2; do
  st ar-tcpxr-$p all_reduce tcpxr; st ar-socket-$p all_reduce socket
  st sr-socket-$p sendrecv socket; st sr-tcpxr-$p sendrecv tcpxr
done
# Which threads make the system calls: the whole host's, by thread name, over one all_reduce run each.
rec(){ local name=$1 net=$2
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 CUDA_VISIBLE_DEVICES=0,1)
  case $net in tcpxr) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/dist/c34:$LD_LIBRARY_PATH NCCL_TCPXR_GPU_BUFFERS=0);; socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);; esac
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 120 env LD_LIBRARY_PATH=$PROF/lib $PROF/perf record -e raw_syscalls:sys_enter -a -q -o /tmp/$name.data -- mpirun --allow-run-as-root --bind-to none -np 2 "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/all_reduce_perf -b 8 -e 8 -n 20000 -w 200 -c 0 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{print "time_us", $6}' $A/$name.log)"
  env LD_LIBRARY_PATH=$PROF/lib $PROF/perf report -i /tmp/$name.data --stdio -n --sort comm --percent-limit 0.5 > $A/$name.comm.txt 2>&1
  env LD_LIBRARY_PATH=$PROF/lib $PROF/perf report -i /tmp/$name.data --stdio -n --sort comm,sym --percent-limit 0.5 > $A/$name.sym.txt 2>&1; rm -f /tmp/$name.data; }
[ "$EV" != context-switches,task-clock,cpu-migrations ] && { rec rec-ar-tcpxr tcpxr; rec rec-ar-socket socket; }
el done
