#!/bin/bash
# run189 (a 2-GPU host; 2026-11-27, twenty-first session): run 188 found an 8 B all_reduce in
# steady state (-n 1000) 2.6-3.0 us slower over tcpxr than over Socket (one rank per GPU). Which
# part: NCCL's setup that tcpxr brings (its tuner and NCCL_MIN_NCHANNELS=8: NCCL_TCPXR_TUNER=0
# drops both), the I/O pool (NCCL_TCPXR_IO_THREADS=0), or the transport itself? And Socket with
# tcpxr's 8 channels. all_reduce and sendrecv 8 B, -n 1000 -w 5 -N 3, -c 0; alternated three times.
cd "$(dirname "$0")/.."; A=/tmp/run189; source dist/common.sh
export CUDA_VISIBLE_DEVICES=0,1; trap "tar cJf $R/run189.tar.xz -C /tmp run189" EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/new/commit.txt; uptime; } > $A/machine.txt 2>&1
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 32
one(){ local name=$1 op=$2 net=$3; shift 3
  local env=(CUDA_VISIBLE_DEVICES=0,1 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,TUNING)
  case $net in tcpxr) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/dist/new:$LD_LIBRARY_PATH NCCL_TCPXR_GPU_BUFFERS=0);;
    socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);; esac
  env+=("$@"); local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 60 mpirun --allow-run-as-root --bind-to none -np 2 "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/${op}_perf -b 8 -e 8 -n 1000 -w 5 -N 3 -c 0 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s ", $6}' $A/$name.log)"; }
for i in 1 2 3; do
  one r$i-ar-tcpxr all_reduce tcpxr; one r$i-ar-tcpxr-notuner all_reduce tcpxr NCCL_TCPXR_TUNER=0
  one r$i-ar-tcpxr-nopool all_reduce tcpxr NCCL_TCPXR_IO_THREADS=0; one r$i-ar-socket all_reduce socket
  one r$i-ar-socket-8ch all_reduce socket NCCL_MIN_NCHANNELS=8
  one r$i-sr-tcpxr sendrecv tcpxr; one r$i-sr-tcpxr-nopool sendrecv tcpxr NCCL_TCPXR_IO_THREADS=0; one r$i-sr-socket sendrecv socket
done
el done
