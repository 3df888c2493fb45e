#!/bin/bash
# run422 (one H200, session 52): run 420 again where its passes disagreed, 2 ranks on GPU 0 under
# MPS, host buffers: main (dist/c91) against the gathered header read reading up to 1 KiB of
# NCCL's buffer (dist/c92) and up to 4 KiB (dist/c93: LL's 2 KiB messages of a 1 KiB share then
# come in one read too). all_gather, reduce_scatter, all_reduce and sendrecv, 32 B-8 KiB x4, -n 500
# -w 100 -c 1, three passes in rotated order.
cd "$(dirname "$0")/.."; A=/tmp/run422; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; for c in c91 c92 c93; do echo "$c: $(cat dist/$c/commit.txt)" >> $A/machine.txt; done
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 16
mps_on
launch(){ local v=$1 np=$2 op=$3
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN)
  env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/$v/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0)
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 90 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/${op}_perf -b 32 -e 8K -f 4 -n 500 -w 100 -c 1 -g 1; }
for pass in 1 2 3; do
  case $pass in 1) vs="c91 c92 c93";; 2) vs="c93 c91 c92";; 3) vs="c92 c93 c91";; esac
  for shape in 2:all_gather 2:reduce_scatter 2:all_reduce 2:sendrecv; do np=${shape%%:*}; op=${shape#*:}
    for v in $vs; do tag=$np-$op-$v-r$pass
      launch $v $np $op > $A/$tag.log 2>&1
      el "$tag rc=$? wrong=$(awk '/^ +[0-9]+ +[0-9]+ /{w+=$9} END{print w+0}' $A/$tag.log) $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$tag.log)"
    done
  done
done
mps_off
el done
