#!/bin/bash
# run436 (one H200, session 54): issue 31 item 1 at 2 ranks on one H200, 8 B-2 KiB, judged over
# many launches instead of two passes: a small size settles per launch into a faster or slower
# cycle (runs 434-435), so each configuration's time is the median of 8 launches. 8 rounds, each
# one launch of main (dist/c101, its experiment off) and of all four Socket tunings (default, 1x1,
# 2x2, 4x4) in rotated order, for all_reduce, all_gather, reduce_scatter and sendrecv,
# -b 8 -e 2K -f 4 -n 1000 -w 200 -c 1, GPU 0 under MPS, host buffers.
cd "$(dirname "$0")/.."; A=/tmp/run436; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c101: $(cat dist/c101/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 16
mps_on
launch(){ local v=$1 np=$2 op=$3
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN)
  case $v in socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);;
    s[124]x[124]) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none NCCL_SOCKET_NTHREADS=${v:1:1} NCCL_NSOCKS_PERTHREAD=${v:3:1});;
    *) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/$v/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0);; esac
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 60 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/${op}_perf -b 8 -e 2K -f 4 -n 1000 -w 200 -c 1 -g 1; }
all=(c101 socket s1x1 s2x2 s4x4)
for round in $(seq 1 8); do
  k=$(( (round - 1) % 5 )); vs="${all[@]:$k} ${all[@]:0:$k}"; [ $((round % 2)) = 0 ] && vs=$(echo $vs | tr ' ' '\n' | tac | tr '\n' ' ')
  for op in sendrecv all_reduce all_gather reduce_scatter; do
    for v in $vs; do tag=2-$op-$v-r$round
      launch $v 2 $op > $A/$tag.log 2>&1
      el "$tag rc=$? wrong=$(awk '/^ +[0-9]+ +[0-9]+ /{w+=$9} END{print w+0}' $A/$tag.log) $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$tag.log)"
    done
  done
done
mps_off
el done
