#!/bin/bash
# run428 (one H200, session 53): main 95820c5b as dist/c99: the control connection writes with
# sendmsg(MSG_NOSIGNAL) instead of writev (c9714daa: no SIGPIPE) and the gathered header read is
# a recvmsg instead of a readv (95820c5b).
#  1. The GPU test binaries of c99 (default, CUDA_DEVICE_MAX_CONNECTIONS=1, MPS) and the
#     correctness set with all four ops (3 and 4 ranks on GPU 0 under MPS, host and GPU buffers,
#     NCCL's choice, Ring, Tree; 4 ranks, GPU buffers, CUDA_DEVICE_MAX_CONNECTIONS=1).
#  2. Times against c97 (340cb0c0, before both) and Socket default: 2 ranks sendrecv and
#     all_gather, 4 ranks sendrecv and all_reduce, 8 B-32 KiB (x8), -n 2000 -w 200 -c 1, host
#     buffers, GPU 0 under MPS, three passes rotated.
cd "$(dirname "$0")/.."; A=/tmp/run428; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; for c in c97 c99; do echo "$c: $(cat dist/$c/commit.txt)" >> $A/machine.txt; done
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 16
gpu_tests dist/c99
checks dist/c99 all_reduce,all_gather,reduce_scatter,sendrecv
rm -rf $A/check-*/logs $A/check-*/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/check-*/*.txt $A/check-*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
mps_on
launch(){ local v=$1 np=$2 op=$3
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN)
  case $v in socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);; *) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/$v/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0);; esac
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 90 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/${op}_perf -b 8 -e 32K -f 8 -n 2000 -w 200 -c 1 -g 1; }
for pass in 1 2 3; do
  case $pass in 1) vs="c97 c99 socket";; 2) vs="socket c99 c97";; 3) vs="c99 socket c97";; esac
  for shape in 2:sendrecv 2:all_gather 4:sendrecv 4:all_reduce; do np=${shape%%:*}; op=${shape#*:}
    for v in $vs; do tag=$np-$op-$v-r$pass
      launch $v $np $op > $A/$tag.log 2>&1
      el "$tag rc=$? wrong=$(awk '/^ +[0-9]+ +[0-9]+ /{w+=$9} END{print w+0}' $A/$tag.log) $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$tag.log)"
    done
  done
done
mps_off
el done
