#!/bin/bash
# run443 (2x H200, 32 cores, session 55): issue 31 item 2 at 2 ranks one per GPU on main (dist/c104
# = 483bc747) against Socket 1x1 and 2x2 (the tunings that win from 8 MiB: runs 331, 338).
# all_reduce, all_gather, reduce_scatter and sendrecv, 8-128 MiB (x2), -n 20 -w 5 -c 1, first cycle;
# 3 rounds, each one launch of each in rotated order; host buffers, no MPS.
cd "$(dirname "$0")/.."; A=/tmp/run443; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0,1; echo "c104: $(cat dist/c104/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 32
launch(){ local v=$1 np=$2 op=$3; shift 3
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN CUDA_VISIBLE_DEVICES=0,1)
  case $v in s[124]x[124]) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none NCCL_SOCKET_NTHREADS=${v:1:1} NCCL_NSOCKS_PERTHREAD=${v:3:1});;
    c104) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/c104/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0);; esac
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 60 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/${op}_perf -c 1 -g 1 -b 8M -e 128M -f 2 -n 20 -w 5; }
all=(c104 s1x1 s2x2)
for round in 1 2 3; do
  k=$(( (round - 1) % 3 )); vs="${all[@]:$k} ${all[@]:0:$k}"; [ $((round % 2)) = 0 ] && vs=$(echo $vs | tr ' ' '\n' | tac | tr '\n' ' ')
  for op in all_reduce all_gather reduce_scatter sendrecv; do for v in $vs; do tag=2-$op-$v-r$round
    launch $v 2 $op > $A/$tag.log 2>&1
    el "$tag rc=$? wrong=$(awk '/^ +[0-9]+ +[0-9]+ /{w+=$9} END{print w+0}' $A/$tag.log) $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$tag.log)"
  done; done
done
el done
