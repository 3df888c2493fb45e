#!/bin/bash
# run399 (one H200, session 49): delayed ACKs on the receiving control connection in NCCL's
# traffic. dist/c81 = main 8a386356 + run398/pingpong.patch: with NCCL_TCPXR_EXP_PINGPONG_US=10000
# each receiving control socket is put in TCP's pingpong mode (TCP_QUICKACK=0, re-armed at most
# every 10 ms), where the kernel ACKs every second small segment; without it, the library is main.
# Run 398 (CPU host): 0.47-0.94 ACKs a message to 0.48-0.49 with 8 small messages in flight, and
# 6-23 % more messages a second; none fewer in a ping-pong (0.50 either way).
#  1. Times: ranks on GPU 0 under MPS, host buffers, -n 500 -w 100 -c 1, 8 B-2 MiB x4; 2 ranks
#     all_gather, reduce_scatter; 4 ranks all_reduce, all_gather, reduce_scatter, sendrecv; off
#     (c81 without the variable), pp (with it) and Socket default; three passes alternated. Each
#     output's TCP segments sent (all of the host's, /proc/net/snmp OutSegs) beside it.
#  2. Bulk: 4 ranks all_reduce and sendrecv 8-128 MiB x4, -n 20, off and pp, ABBA.
cd "$(dirname "$0")/.."; A=/tmp/run399; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
mps_on
segs(){ awk '/^Tcp:/{getline; print $12; exit}' /proc/net/snmp; }
launch(){ local v=$1 np=$2 op=$3 range=$4 iters=$5
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN)
  case $v in socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);; off) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/c81/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0);;
    pp) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/c81/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0 NCCL_TCPXR_EXP_PINGPONG_US=10000);; esac
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 120 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/${op}_perf $range -f 4 -n $iters -w ${WARM:-100} -c 1 -g 1; }
one(){ local tag=$1; shift; local s0=$(segs); launch "$@" > $A/$tag.log 2>&1; local rc=$? s1=$(segs)
  el "$tag rc=$rc segs=$((s1-s0)) wrong=$(awk '/^ +[0-9]+ +[0-9]+ /{w+=$9} END{print w+0}' $A/$tag.log) $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$tag.log)"; }
for pass in 1 2 3; do
  case $pass in 1) vs="off pp socket";; 2) vs="socket pp off";; 3) vs="pp off socket";; esac
  for shape in 2:all_gather 2:reduce_scatter 4:all_reduce 4:all_gather 4:reduce_scatter 4:sendrecv; do np=${shape%%:*}; op=${shape#*:}
    for v in $vs; do one $np-$op-$v-r$pass $v $np $op "-b 8 -e 2M" 500; done
  done
done
for pass in 1 2; do
  case $pass in 1) vs="off pp";; 2) vs="pp off";; esac
  for op in all_reduce sendrecv; do for v in $vs; do WARM=5 one bulk-4-$op-$v-r$pass $v 4 $op "-b 8M -e 128M" 20; done; done
done
mps_off
el done
