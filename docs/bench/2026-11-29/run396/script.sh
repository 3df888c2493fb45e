#!/bin/bash
# run396 (one H200, session 48): the one-step collectives with exact control reads (dist/c80 =
# e36cb32e) against Socket default and 1x1 (the tunings that win at small sizes), GPU 0 under MPS,
# host buffers, 8 B-64 KiB x2, -n 500 -w 100 -c 1, three passes in rotated order: 4 ranks
# all_gather and reduce_scatter (item 1's 4-ranks-on-one-H200 row had 64-256 B at 0.87-0.99),
# 2 ranks reduce_scatter (run 393 measured 2-rank all_gather).
cd "$(dirname "$0")/.."; A=/tmp/run396; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c80: $(cat dist/c80/commit.txt)" >> $A/machine.txt
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
mps_on
launch(){ local v=$1 np=$2 op=$3
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN)
  case $v in socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);; socket1x1) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none NCCL_SOCKET_NTHREADS=1 NCCL_NSOCKS_PERTHREAD=1);; *) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/$v/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0);; esac
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 90 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/${op}_perf -b 8 -e 64K -f 2 -n 500 -w 100 -c 1 -g 1; }
for pass in 1 2 3; do
  case $pass in 1) vs="c80 socket socket1x1";; 2) vs="socket1x1 c80 socket";; 3) vs="socket socket1x1 c80";; esac
  for shape in 4:all_gather 4:reduce_scatter 2:reduce_scatter; do np=${shape%%:*}; op=${shape#*:}
    for v in $vs; do tag=$np-$op-$v-r$pass
      launch $v $np $op > $A/$tag.log 2>&1
      el "$tag rc=$? wrong=$(awk '/^ +[0-9]+ +[0-9]+ /{w+=$9} END{print w+0}' $A/$tag.log) $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$tag.log)"
    done
  done
done
mps_off
el done
