#!/bin/bash
# run208 (a 2-GPU host; 2026-11-27, twenty-third session): the small all_gather and reduce_scatter
# gap at 2 ranks, one per GPU. Run 206 (medians of 3 passes of 200 iterations): all_gather 32-128 B
# 15.4-16.2 us against Socket's 14.3-14.5, reduce_scatter 15.6-16.6 against 4x4's 14.2-14.6, 32 KiB
# of both 0.85-0.92. First NCCL's choices (NCCL_DEBUG_SUBSYS=TUNING, 2 iterations, not timed) under
# tcpxr and Socket; then -n 1000 -w 50 -N 3 -c 0, three alternations: tcpxr (e4db58c, dist/new) at
# its defaults, without its tuner (NCCL_TCPXR_TUNER=0: NCCL's own choices, 4 channels built),
# without its tuner but NCCL_MIN_NCHANNELS=8 (the channels alone); Socket default and 4x4
# (Socket 1x1 and 8 channels left out for time).
cd "$(dirname "$0")/.."; A=/tmp/run208; source dist/common.sh
export CUDA_VISIBLE_DEVICES=0,1; trap "tar cJf $R/run208.tar.xz -C /tmp run208" EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/new/commit.txt; uptime; } > $A/machine.txt 2>&1
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 32
# one NAME OP NET SIZES ITERS [K=V ...]
one(){ local name=$1 op=$2 net=$3 sizes=$4 iters=$5; shift 5
  local env=(CUDA_VISIBLE_DEVICES=0,1 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN)
  case $net in tcpxr) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/dist/new:$LD_LIBRARY_PATH NCCL_TCPXR_GPU_BUFFERS=0);;
    socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);; esac
  env+=("$@"); local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 60 mpirun --allow-run-as-root --bind-to none -np 2 "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/${op}_perf $sizes -n $iters -w ${W:-50} -N ${NN:-3} -c 0 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(grep -a -E '^ +[0-9]+ +[0-9]+ +(float|int8)' $A/$name.log | awk '{printf "%s:%s ", $1, $6}')"; }
for op in all_gather reduce_scatter all_reduce; do
  W=1 NN=1 one tuning-$op-tcpxr $op tcpxr "-b 32 -e 32K -f 32" 2 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING
  W=1 NN=1 one tuning-$op-socket $op socket "-b 32 -e 32K -f 32" 2 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING
done
for i in 1 2 3; do for op in all_gather reduce_scatter; do for sz in "-b 32 -e 128 -f 2" "-b 32K -e 32K"; do
  t=$(echo $sz | awk '{print $2}')
  one r$i-$op-$t-tcpxr $op tcpxr "$sz" 1000
  one r$i-$op-$t-tcpxr-notuner $op tcpxr "$sz" 1000 NCCL_TCPXR_TUNER=0
  one r$i-$op-$t-tcpxr-notuner-8ch $op tcpxr "$sz" 1000 NCCL_TCPXR_TUNER=0 NCCL_MIN_NCHANNELS=8
  one r$i-$op-$t-socket $op socket "$sz" 1000
  one r$i-$op-$t-socket4x4 $op socket "$sz" 1000 NCCL_SOCKET_NTHREADS=4 NCCL_NSOCKS_PERTHREAD=4
done; done; done
el done
