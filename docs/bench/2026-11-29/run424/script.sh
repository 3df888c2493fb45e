#!/bin/bash
# run424 (one H200, session 52): the gathered header read as committed (dist/c95: the header's
# read also reads as much as the last message's inline payload was, at most 4 KiB, into NCCL's
# buffer; runs 420-423 measured its variants c92-c94):
#  1. The GPU test binaries of c95, and the correctness set with all four ops (3 and 4 ranks on
#     GPU 0 under MPS, host and GPU buffers, NCCL's choice, Ring, Tree; 4 ranks, GPU buffers,
#     CUDA_DEVICE_MAX_CONNECTIONS=1; 8 B-32 MiB -c 1).
#  2. Times against main (dist/c91) and Socket default: 2 ranks all_gather, reduce_scatter,
#     all_reduce, sendrecv and 4 ranks all_reduce, sendrecv, 8 B-2 MiB x4, -n 500 -w 100 -c 1, two
#     passes rotated, host buffers.
cd "$(dirname "$0")/.."; A=/tmp/run424; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; for c in c91 c95; do echo "$c: $(cat dist/$c/commit.txt)" >> $A/machine.txt; done
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 16
gpu_tests dist/c95
checks dist/c95 all_reduce,all_gather,reduce_scatter,sendrecv
rm -rf $A/check-*/logs $A/check-*/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/check-*/*.txt $A/check-*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
mps_on
launch(){ local v=$1 np=$2 op=$3
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN)
  case $v in socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);; *) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/$v/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0);; esac
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 90 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/${op}_perf -b 8 -e 2M -f 4 -n 500 -w 100 -c 1 -g 1; }
for pass in 1 2; do
  case $pass in 1) vs="c91 c95 socket";; 2) vs="socket c95 c91";; esac
  for shape in 2:all_gather 2:reduce_scatter 2:all_reduce 2:sendrecv 4:all_reduce 4:sendrecv; do np=${shape%%:*}; op=${shape#*:}
    for v in $vs; do tag=$np-$op-$v-r$pass
      launch $v $np $op > $A/$tag.log 2>&1
      el "$tag rc=$? wrong=$(awk '/^ +[0-9]+ +[0-9]+ /{w+=$9} END{print w+0}' $A/$tag.log) $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$tag.log)"
    done
  done
done
mps_off
el done
