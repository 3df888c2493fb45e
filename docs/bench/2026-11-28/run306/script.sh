#!/bin/bash
# run306 (a 4-GPU host, 4 ranks one per GPU): at 4 ranks tcpxr's all_reduce of 8-64 B takes 45-50
# us against Socket's 37-40 (run 305, steady state), and the tree runs slower once the ring's
# connections exist (run 305). Does the number of channels NCCL builds (tcpxr has it build 8,
# nccl_settings) cost the small sizes at 4 ranks? main (dist/c41) at its default, with 4 and with 2
# channels built (NCCL_MAX_NCHANNELS, which also turns off tcpxr's NCCL_MIN_NCHANNELS=8), Socket's
# default; all_reduce 8 B-64 KiB -N 3, 200 iterations, -c 0, host buffers, two passes, the order
# rotated; then NCCL's choices (TUNING) for tcpxr's default and Socket's.
cd "$(dirname "$0")/.."; A=/tmp/run306; source dist/common.sh
start_run; echo "c41: $(cat dist/c41/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
cyc(){ local name=$1 v=$2 sub=${3:-INIT,NET} n=${4:-200}
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=$sub)
  case $v in
    socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);;
    *) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/c41/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0)
       [ $v = ch4 ] && env+=(NCCL_MAX_NCHANNELS=4); [ $v = ch2 ] && env+=(NCCL_MAX_NCHANNELS=2);;
  esac
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  CUDA_VISIBLE_DEVICES=0,1,2,3 timeout 60 mpirun --allow-run-as-root --bind-to none -np 4 "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/all_reduce_perf -b 8 -e 64K -f 2 -n $n -w 20 -N 3 -c 0 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(grep -m1 -o 'Loaded net plugin [^ ]*\|Using network [A-Za-z]*' $A/$name.log | head -1); $(grep -m1 -o 'comm .* nRanks 4 .*' $A/$name.log | head -c 200) 8B: $(awk '/^ +8 /{printf "%s ", $6}' $A/$name.log)"; }
set -- c8 ch4 ch2 socket
for pass in 1 2; do for v in "$@"; do cyc r4-$v-$pass $v; done; set -- socket ch2 ch4 c8; done
for v in c8 socket ch2; do cyc tune-$v $v INIT,NET,TUNING 5
  grep -h "AllReduce:" $A/tune-$v.log | sed -E 's/^.*NCCL INFO //; s/0x[0-9a-f]+//g; s/opCount [0-9a-f]+//' | sort | uniq -c > $A/tuning-choices-$v.txt
  grep -h "Channel\|channels\|nChannels" $A/tune-$v.log | sed -E 's/^[^ ]+ //' | sort | uniq -c | head -20 > $A/channels-$v.txt
done
el done
