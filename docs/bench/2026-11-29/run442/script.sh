#!/bin/bash
# run442 (one H200, session 55): issue 31 item 2 (at least 1.5x from 8 MiB) on main (dist/c104 =
# 483bc747) against Socket 1x1 and 2x2, the tunings that win from 8 MiB on one H200 (runs 406,
# 415: default and 4x4 take 1.3-3x their time there). all_reduce, all_gather, reduce_scatter and
# sendrecv, 8-128 MiB (x2), -n 20 -w 5 -c 1, first cycle; 6 rounds at 2 ranks, then 4 at 4 ranks;
# each round one launch of each in rotated order; GPU 0 under MPS, host buffers.
cd "$(dirname "$0")/.."; A=/tmp/run442; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c104: $(cat dist/c104/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 16
mps_on
launch(){ local v=$1 np=$2 op=$3; shift 3
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN)
  case $v in s[124]x[124]) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none NCCL_SOCKET_NTHREADS=${v:1:1} NCCL_NSOCKS_PERTHREAD=${v:3:1});;
    c104) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/c104/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0);; esac
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 90 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/${op}_perf -c 1 -g 1 -b 8M -e 128M -f 2 -n 20 -w 5; }
all=(c104 s1x1 s2x2)
rounds(){ local np=$1 n=$2 round k vs v op tag
  for round in $(seq 1 $n); do
    k=$(( (round - 1) % 3 )); vs="${all[@]:$k} ${all[@]:0:$k}"; [ $((round % 2)) = 0 ] && vs=$(echo $vs | tr ' ' '\n' | tac | tr '\n' ' ')
    for op in all_reduce all_gather reduce_scatter sendrecv; do for v in $vs; do tag=$np-$op-$v-r$round
      launch $v $np $op > $A/$tag.log 2>&1
      el "$tag rc=$? wrong=$(awk '/^ +[0-9]+ +[0-9]+ /{w+=$9} END{print w+0}' $A/$tag.log) $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$tag.log)"
    done; done
  done; }
rounds 2 6
rounds 4 4
mps_off
el done
