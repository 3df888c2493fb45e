#!/bin/bash
# run423 (one H200, session 52): runs 420 and 422 again with more samples, 2 ranks on GPU 0 under
# MPS, host buffers: main (dist/c91) against the gathered header read of up to 4 KiB (dist/c93,
# which keeps a copy of 4 KiB of NCCL's buffer per receive to restore what it reads past the
# message) and of as much as the connection's last inline payload (dist/c94: the copy is that
# size, and a message of the same size leaves the next in the socket). 2 ranks all_gather,
# reduce_scatter, all_reduce and sendrecv, four passes rotated; 4 ranks all_reduce and sendrecv,
# passes 1-2; 32 B-2 KiB x4, -n 2000 -w 200 -c 1.
cd "$(dirname "$0")/.."; A=/tmp/run423; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; for c in c91 c93 c94; do echo "$c: $(cat dist/$c/commit.txt)" >> $A/machine.txt; done
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 16
mps_on
launch(){ local v=$1 np=$2 op=$3
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN)
  env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/$v/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0)
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 90 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/${op}_perf -b 32 -e 2K -f 4 -n 2000 -w 200 -c 1 -g 1; }
for pass in 1 2 3 4; do
  case $pass in 1) vs="c91 c93 c94";; 2) vs="c94 c91 c93";; 3) vs="c93 c94 c91";; 4) vs="c91 c94 c93";; esac
  shapes="2:all_gather 2:reduce_scatter 2:all_reduce 2:sendrecv"; [ $pass -le 2 ] && shapes="$shapes 4:all_reduce 4:sendrecv"
  for shape in $shapes; do np=${shape%%:*}; op=${shape#*:}
    for v in $vs; do tag=$np-$op-$v-r$pass
      launch $v $np $op > $A/$tag.log 2>&1
      el "$tag rc=$? wrong=$(awk '/^ +[0-9]+ +[0-9]+ /{w+=$9} END{print w+0}' $A/$tag.log) $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$tag.log)"
    done
  done
done
mps_off
el done
