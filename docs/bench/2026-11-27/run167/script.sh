#!/bin/bash
# run167 (a fresh 4-GPU host), issue 31's 512 KiB-16 MiB band at 4 ranks one per GPU, where run 166
# had tcpxr at 0.72-0.92 of Socket's best: which of the I/O pool's settings, chosen on 16 cores at
# 2 ranks, costs the 4-rank ring on 64 cores? tcpxr as is (hand-off 0: every striped chunk to an
# I/O thread; 1 spinning thread; 32 KiB idle inline), the proxy thread moving chunks itself
# (NCCL_TCPXR_HANDOFF_BYTES=512K), 4 spinning I/O threads, 256 KiB idle inline; Socket 1x1 and 2x2.
# all_reduce and all_gather 256 KiB-16 MiB, 30 iterations, -c 0, alternated twice, NCCL 2.28.3.
cd "$(dirname "$0")/.."; A=/tmp/run167; source dist/common.sh
export CUDA_VISIBLE_DEVICES=0,1,2,3
fin(){ tar cJf $R/run167.tar.xz -C /tmp run167; }; trap fin EXIT
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
for i in 1 2; do for op in all_reduce all_gather; do
  pg r$i-$op-tcpxr $op host; pg r$i-$op-handoff512k $op host NCCL_TCPXR_HANDOFF_BYTES=512K; pg r$i-$op-spin4 $op host NCCL_TCPXR_IO_SPIN_THREADS=4
  pg r$i-$op-inline256k $op host NCCL_TCPXR_INLINE_IDLE_BYTES=256K
  pg r$i-$op-socket1x1 $op socket NCCL_SOCKET_NTHREADS=1 NCCL_NSOCKS_PERTHREAD=1; pg r$i-$op-socket2x2 $op socket NCCL_SOCKET_NTHREADS=2 NCCL_NSOCKS_PERTHREAD=2; done; done
{ uptime; } >> $A/machine.txt 2>&1
el done
