#!/bin/bash
# run420 (one H200, session 52): the header and a small inline payload in one gathered read
# (dist/c92 = main 7ec6e02f + recv.rs/ctrl.rs: readv into the header and up to 1 KiB of NCCL's
# buffer, what it took of later messages handed back and the buffer restored) against main
# (dist/c91) and Socket default. Exact reads cost a small message two recvs (run 397: the header's
# took 1.4 us); one-step collectives of 32-128 B trail Socket's best by about 1 us (run 415).
#  1. Times: 2 ranks (all_gather, reduce_scatter, all_reduce, sendrecv) and 4 ranks (all_reduce,
#     sendrecv) on GPU 0 under MPS, host buffers, 8 B-2 MiB x4, -n 500 -w 100 -c 1, three passes
#     in rotated order.
#  2. The GPU test binaries of c92.
cd "$(dirname "$0")/.."; A=/tmp/run420; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; for c in c91 c92; do echo "$c: $(cat dist/$c/commit.txt)" >> $A/machine.txt; done
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 16
mps_on
launch(){ local v=$1 np=$2 op=$3
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN)
  case $v in socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);; *) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/$v/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0);; esac
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 90 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/${op}_perf -b 8 -e 2M -f 4 -n 500 -w 100 -c 1 -g 1; }
for pass in 1 2 3; do
  case $pass in 1) vs="c91 c92 socket";; 2) vs="socket c92 c91";; 3) vs="c92 c91 socket";; esac
  for shape in 2:all_gather 2:reduce_scatter 2:all_reduce 2:sendrecv 4:all_reduce 4:sendrecv; do np=${shape%%:*}; op=${shape#*:}
    for v in $vs; do tag=$np-$op-$v-r$pass
      launch $v $np $op > $A/$tag.log 2>&1
      el "$tag rc=$? wrong=$(awk '/^ +[0-9]+ +[0-9]+ /{w+=$9} END{print w+0}' $A/$tag.log) $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$tag.log)"
    done
  done
done
mps_off
gpu_tests dist/c92
el done
