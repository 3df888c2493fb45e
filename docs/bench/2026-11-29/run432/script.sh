#!/bin/bash
# run432 (one H200, session 53): run 430 for the two ops it left out at 4 ranks: main 95820c5b
# (dist/c99; its library as 9a852146's) against all four Socket tunings (default,
# 1x1, 2x2, 4x4: NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD), 8 B-2 MiB (x4), -n 300 -w 60 -c 1:
# 4 ranks all_gather and reduce_scatter, host
# buffers, GPU 0 under MPS, two passes in reversed order.
cd "$(dirname "$0")/.."; A=/tmp/run432; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c99: $(cat dist/c99/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 16
mps_on
launch(){ local v=$1 np=$2 op=$3
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN)
  case $v in socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);;
    s[124]x[124]) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none NCCL_SOCKET_NTHREADS=${v:1:1} NCCL_NSOCKS_PERTHREAD=${v:3:1});;
    *) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/$v/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0);; esac
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 90 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/${op}_perf -b 8 -e 2M -f 4 -n 300 -w 60 -c 1 -g 1; }
for pass in 1 2; do
  case $pass in 1) vs="c99 socket s1x1 s2x2 s4x4";; 2) vs="s4x4 s2x2 s1x1 socket c99";; esac
  for shape in 4:all_gather 4:reduce_scatter; do np=${shape%%:*}; op=${shape#*:}
    for v in $vs; do tag=$np-$op-$v-r$pass
      launch $v $np $op > $A/$tag.log 2>&1
      el "$tag rc=$? wrong=$(awk '/^ +[0-9]+ +[0-9]+ /{w+=$9} END{print w+0}' $A/$tag.log) $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$tag.log)"
    done
  done
done
mps_off
el done
