#!/bin/bash
# run402 (one H200, session 49): run 401's speed part again, four passes (ABBA BAAB), after its
# two passes had GPU buffers' 4-rank all_reduce of 16-32 MiB 0.99-1.19x main's time with VMM host
# pages (dist/c83) and other shapes level. Ranks on GPU 0 under MPS, 8-128 MiB, -n 20 -w 5:
# GPU buffers 4 ranks all_reduce and sendrecv, 2 ranks sendrecv; host buffers 4 ranks all_reduce
# as the control (no pinned memory there: the same code in both libraries).
cd "$(dirname "$0")/.."; A=/tmp/run402; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "main: $(cat dist/c80/commit.txt)" >> $A/machine.txt
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
mps_on
launch(){ local c=$1 np=$2 op=$3 buf=$4
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/$c/libnccl-net-tcpxr.so)
  case $buf in gpu) env+=(NCCL_NET_GDR_LEVEL=SYS NCCL_TCPXR_GPU_BUFFERS=1);; host) env+=(NCCL_TCPXR_GPU_BUFFERS=0);; esac
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 120 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/${op}_perf -b 8M -e 128M -f 2 -n 20 -w 5 -c 1 -g 1; }
for pass in 1 2 3 4; do
  case $pass in 1|4) vs="c80 c83";; 2|3) vs="c83 c80";; esac
  for shape in 4:all_reduce:gpu 4:sendrecv:gpu 2:sendrecv:gpu 4:all_reduce:host; do IFS=: read np op buf <<< "$shape"
    for c in $vs; do tag=$buf-$np-$op-$c-r$pass
      launch $c $np $op $buf > $A/$tag.log 2>&1
      el "$tag rc=$? wrong=$(awk '/^ +[0-9]+ +[0-9]+ /{w+=$9} END{print w+0}' $A/$tag.log) $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$tag.log)"
    done
  done
done
mps_off
el done
