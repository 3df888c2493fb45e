#!/bin/bash
# run439 (one H200, session 54): the 2-rank all_reduce of 256 KiB-4 MiB (run 430: 512 KiB 0.89,
# 2 MiB 0.91 by medians of two passes) by each configuration's median over 6 launches: main
# (dist/c102, its experiment off) and all four Socket tunings, -b 256K -e 4M -f 2 -n 100 -w 20 -c 1,
# each round one launch of each in rotated order; GPU 0 under MPS, host buffers.
cd "$(dirname "$0")/.."; A=/tmp/run439; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c102: $(cat dist/c102/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 16
mps_on
launch(){ local v=$1 np=$2 op=$3; shift 3
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN)
  case $v in socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);;
    s[124]x[124]) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none NCCL_SOCKET_NTHREADS=${v:1:1} NCCL_NSOCKS_PERTHREAD=${v:3:1});;
    *) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/$v/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0);; esac
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 60 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/${op}_perf -g 1 -c 1 "$@"; }
all=(c102 socket s1x1 s2x2 s4x4)
for round in $(seq 1 6); do
  k=$(( (round - 1) % 5 )); vs="${all[@]:$k} ${all[@]:0:$k}"; [ $((round % 2)) = 0 ] && vs=$(echo $vs | tr ' ' '\n' | tac | tr '\n' ' ')
  for v in $vs; do tag=2-all_reduce-$v-r$round
    launch $v 2 all_reduce -b 256K -e 4M -f 2 -n 100 -w 20 > $A/$tag.log 2>&1
    el "$tag rc=$? wrong=$(awk '/^ +[0-9]+ +[0-9]+ /{w+=$9} END{print w+0}' $A/$tag.log) $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$tag.log)"
  done
done
mps_off
el done
