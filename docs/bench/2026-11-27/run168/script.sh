#!/bin/bash
# run168 (a fresh 4-GPU host), issue 31's band at 4 ranks one per GPU, continued from runs 166-167:
# the channel count. tcpxr's tuner puts all_reduce shares of 256 KiB-2 MiB on the ring in Simple
# on at most 2 channels (chosen at 2 ranks on 16 cores); with NCCL_MIN_NCHANNELS=NCCL_MAX_NCHANNELS=N
# it keeps the ring in Simple and leaves the count to N: 2, 4 and 8. Also every idle I/O thread
# spinning (NCCL_TCPXR_IO_SPIN_THREADS=8: no wake-up for any hand-off), which bounds what wake-ups
# cost. What NCCL picks for Socket 1x1 and 2x2 in the band is logged first (NCCL_DEBUG_SUBSYS=TUNING,
# 2 iterations). all_reduce and all_gather 256 KiB-16 MiB, 30 iterations, -c 0, alternated twice.
cd "$(dirname "$0")/.."; A=/tmp/run168; source dist/common.sh
export CUDA_VISIBLE_DEVICES=0,1,2,3
fin(){ tar cJf $R/run168.tar.xz -C /tmp run168; }; trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/commit.txt; uptime; ps -eo pid,pcpu,comm --sort=-pcpu | head -15; } > $A/machine.txt 2>&1
NT=/tmp/nt-2.28.3/build
(rm -rf /tmp/nt-2.28.3 && cp -r ncclTests/nccl-tests /tmp/nt-2.28.3 && cd /tmp/nt-2.28.3 && make -j48 MPI=1 MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi CUDA_HOME=/usr/local/cuda NCCL_HOME=/usr NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" > $A/nt-build.txt 2>&1); el "nccl-tests build rc=$?"
{ uptime; ps -eo pid,pcpu,comm --sort=-pcpu | head -8; } >> $A/machine.txt 2>&1
pg(){ local name=$1 op=$2 buf=$3; shift 3
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV CUDA_VISIBLE_DEVICES=0,1,2,3)
  case $buf in
    host) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/dist:$LD_LIBRARY_PATH NCCL_TCPXR_GPU_BUFFERS=0);;
    socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);;
  esac
  env+=("$@"); local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 60 mpirun --allow-run-as-root --bind-to none -np 4 "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/${op}_perf -b 256K -e 16M -f 2 -n 30 -w 5 -c 0 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$name.log)"; }
for t in 1x1:1:1 2x2:2:2; do IFS=: read n th so <<< "$t"
  timeout 60 mpirun --allow-run-as-root --bind-to none -np 4 -x CUDA_VISIBLE_DEVICES=0,1,2,3 -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 -x NCCL_SOCKET_IFNAME=lo -x NCCL_NVLS_ENABLE=0 -x NCCL_NET=Socket -x NCCL_NET_PLUGIN=none -x NCCL_SOCKET_NTHREADS=$th -x NCCL_NSOCKS_PERTHREAD=$so -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=TUNING sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/all_reduce_perf -b 256K -e 16M -f 2 -n 2 -w 0 -c 0 -g 1 > $A/tuning-socket$n.log 2>&1; el "tuning socket$n rc=$? $(grep -a -c 'Algo' $A/tuning-socket$n.log) lines"; done
for i in 1 2; do for op in all_reduce all_gather; do
  pg r$i-$op-tcpxr $op host; pg r$i-$op-ch2 $op host NCCL_MIN_NCHANNELS=2 NCCL_MAX_NCHANNELS=2; pg r$i-$op-ch4 $op host NCCL_MIN_NCHANNELS=4 NCCL_MAX_NCHANNELS=4
  pg r$i-$op-ch8 $op host NCCL_MIN_NCHANNELS=8 NCCL_MAX_NCHANNELS=8; pg r$i-$op-spinall $op host NCCL_TCPXR_IO_SPIN_THREADS=8
  pg r$i-$op-socket1x1 $op socket NCCL_SOCKET_NTHREADS=1 NCCL_NSOCKS_PERTHREAD=1; pg r$i-$op-socket2x2 $op socket NCCL_SOCKET_NTHREADS=2 NCCL_NSOCKS_PERTHREAD=2; done; done
{ uptime; } >> $A/machine.txt 2>&1
el done
