#!/bin/bash
# run166 (a fresh 4-GPU host), issue 31: run 163 found tcpxr at 4 ranks about 2x slower than run
# 161 had it (1-16 MiB all_reduce) while Socket's times matched; same net code (f2e3f2e -> 0bc821a
# touched only RMA). Retaken on a fresh instance with the machine's load recorded first, and the two
# variants run 163 found faster (256 KiB chunks, 8 stripes): 4 ranks one per GPU, NCCL 2.28.3,
# all_reduce and all_gather 512 KiB-64 MiB, 30 iterations, -c 0, alternated three times, against
# Socket 1x1 and 2x2 (the tunings that win this band at 4 ranks in runs 160-163).
cd "$(dirname "$0")/.."; A=/tmp/run166; source dist/common.sh
export CUDA_VISIBLE_DEVICES=0,1,2,3
fin(){ tar cJf $R/run166.tar.xz -C /tmp run166; }; trap fin EXIT
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
  timeout 60 mpirun --allow-run-as-root --bind-to none -np 4 "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/${op}_perf -b 512K -e 64M -f 2 -n 30 -w 5 -c 0 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$name.log)"; }
for i in 1 2 3; do for op in all_reduce all_gather; do
  pg r$i-$op-tcpxr $op host; pg r$i-$op-chunk256k $op host NCCL_TCPXR_CHUNK_BYTES=256K; pg r$i-$op-stripes8 $op host NCCL_TCPXR_STRIPES=8
  pg r$i-$op-socket1x1 $op socket NCCL_SOCKET_NTHREADS=1 NCCL_NSOCKS_PERTHREAD=1; pg r$i-$op-socket2x2 $op socket NCCL_SOCKET_NTHREADS=2 NCCL_NSOCKS_PERTHREAD=2; done; done
{ uptime; } >> $A/machine.txt 2>&1
el done
