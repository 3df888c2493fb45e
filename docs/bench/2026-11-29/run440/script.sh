#!/bin/bash
# run440 (one H200, session 55): issue 31 item 1 at 8 B-2 KiB, with the same-code spread measured.
# NCCL 2.27+ sends up to 128 B inline from its own thread whatever Socket's tuning, so the best of
# four tunings' medians is the least of four alike samples. Here main (dist/c104 = 483bc747) runs
# as four configurations too (c104, c104b, c104c, c104d: the same library), beside Socket default,
# 1x1, 2x2 and 4x4, in rotated order, each round one launch of each: the best of main's four
# against the best of Socket's four is the comparison with the same bias on both sides.
# sendrecv at 2 ranks (10 rounds) and 4 ranks (8), all_reduce and reduce_scatter at 2 ranks (6);
# -b 8 -e 2K -f 4 -n 1000 -w 200 -c 1, GPU 0 under MPS, host buffers.
cd "$(dirname "$0")/.."; A=/tmp/run440; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c104: $(cat dist/c104/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 16
mps_on
launch(){ local v=$1 np=$2 op=$3
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN)
  case $v in socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);;
    s[124]x[124]) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none NCCL_SOCKET_NTHREADS=${v:1:1} NCCL_NSOCKS_PERTHREAD=${v:3:1});;
    c104*) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/c104/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0);; esac
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 60 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/${op}_perf -b 8 -e 2K -f 4 -n 1000 -w 200 -c 1 -g 1; }
all=(c104 socket c104b s1x1 c104c s2x2 c104d s4x4)
rounds(){ local np=$1 n=$2 op=$3 round k vs v tag
  for round in $(seq 1 $n); do
    k=$(( (round - 1) % 8 )); vs="${all[@]:$k} ${all[@]:0:$k}"; [ $((round % 2)) = 0 ] && vs=$(echo $vs | tr ' ' '\n' | tac | tr '\n' ' ')
    for v in $vs; do tag=$np-$op-$v-r$round
      launch $v $np $op > $A/$tag.log 2>&1
      el "$tag rc=$? wrong=$(awk '/^ +[0-9]+ +[0-9]+ /{w+=$9} END{print w+0}' $A/$tag.log) $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$tag.log)"
    done
  done; }
rounds 2 10 sendrecv
rounds 4 8 sendrecv
rounds 2 6 all_reduce
rounds 2 6 reduce_scatter
mps_off
el done
