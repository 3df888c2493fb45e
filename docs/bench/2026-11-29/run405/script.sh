#!/bin/bash
# run405 (one H200, session 49): the 4-rank all_reduce of 8 B-2 KiB on one H200 (0.90-0.94 of
# Socket default's time at 8-32 B in runs 393 and 399): which algorithm NCCL runs for tcpxr and
# for Socket, and each forced onto the ring and onto the tree. dist/c84 (a7e24060), host
# buffers, ranks on GPU 0 under MPS, -b 8 -e 2K -f 4, -n 500 -w 100, three passes rotated;
# then one pass of tcpxr and Socket default with NCCL's TUNING log (-n 20) for the choices.
cd "$(dirname "$0")/.."; A=/tmp/run405; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
mps_on
launch(){ local v=$1 iters=$2; shift 2
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN "$@")
  case $v in socket*) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);; *) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/c84/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0);; esac
  case $v in *-ring) env+=(NCCL_ALGO=Ring);; *-tree) env+=(NCCL_ALGO=Tree);; esac
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 120 mpirun --allow-run-as-root --bind-to none -np 4 "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/all_reduce_perf -b 8 -e 2K -f 4 -n $iters -w 100 -c 1 -g 1; }
all="tcpxr tcpxr-ring tcpxr-tree socket socket-ring socket-tree"
for pass in 1 2 3; do
  case $pass in 1) vs="$all";; 2) vs=$(echo $all | tr ' ' '\n' | tac | tr '\n' ' ');; 3) vs="socket socket-ring socket-tree tcpxr tcpxr-ring tcpxr-tree";; esac
  for v in $vs; do tag=4-all_reduce-$v-r$pass
    launch $v 500 > $A/$tag.log 2>&1
    el "$tag rc=$? wrong=$(awk '/^ +[0-9]+ +[0-9]+ /{w+=$9} END{print w+0}' $A/$tag.log) $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$tag.log)"
  done
done
for v in tcpxr socket; do
  launch $v 20 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING > $A/tuning-$v.log 2>&1
  el "tuning $v: $(grep -o 'AllReduce: [0-9]* Bytes -> Algo [A-Za-z_]* proto [A-Za-z0-9_]* channel{Lo..Hi}={[0-9]*..[0-9]*}' $A/tuning-$v.log | sort | uniq -c | sort -k3n | head -8 | tr -s ' ' | tr '\n' ';')"
  grep -h 'AllReduce' $A/tuning-$v.log | head -3 >> $A/tuning-sample.txt
done
mps_off
el done
