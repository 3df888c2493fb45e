#!/bin/bash
# run160 (4-GPU host), issue 31 at 3e12ccb (GPU buffers over the socket now ask NCCL for 4 channels
# per net peer): the 4-GPU table, 4 ranks one per GPU, each its own NCCL host, NCCL 2.28.3,
# nccl-tests 2.19.6, all_reduce, all_gather, reduce_scatter and sendrecv 8 B-512 MiB, 20 iterations,
# -c 1, configs Socket default/1x1/2x2/4x4, tcpxr host buffers, tcpxr GPU buffers
# (ncclTests/run_nccl_tests.py --mpirun --ranks 4); then 2 ranks on GPUs 0,1, sendrecv 1-512 MiB,
# 10 iterations, GPU buffers with the new default (4 channels per peer), with 8 and with 2, and host
# buffers, alternated twice.
cd "$(dirname "$0")/.."; A=/tmp/run160; source dist/common.sh
export CUDA_VISIBLE_DEVICES=0,1,2,3
fin(){ tar cJf $R/run160.tar.xz -C /tmp run160; }; trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
(cd ncclTests/nccl-tests && make -j32 MPI=1 MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi CUDA_HOME=/usr/local/cuda NCCL_HOME=/usr NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" > $A/nccl-tests-build.txt 2>&1); el "nccl-tests (2.28.3) build rc=$?"
timeout 400 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist --mpirun --ranks 4 --ops all_reduce,all_gather,reduce_scatter,sendrecv --max 512M --iters 20 --warmup 5 --timeout 100 --out $A/table4 > $A/table4.txt 2>&1
el "table4 rc=$? $(grep -c ' ok, ' $A/table4.txt) ok, $(grep -c FAILED $A/table4.txt) failed"
pg(){ local name=$1 np=$2 op=$3 buf=$4 lo=$5 hi=$6; shift 6
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV CUDA_VISIBLE_DEVICES=0,1,2,3)
  case $buf in
    gpu) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/dist:$LD_LIBRARY_PATH NCCL_NET_GDR_LEVEL=SYS NCCL_TCPXR_GPU_BUFFERS=1);;
    host) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/dist:$LD_LIBRARY_PATH NCCL_TCPXR_GPU_BUFFERS=0);;
  esac
  env+=("$@"); local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 100 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/${op}_perf -b $lo -e $hi -f 2 -n 10 -w 3 -c 1 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(grep -a -h 'Out of bounds' $A/$name.log | awk '{print $7,$8}') | $(grep -a -m1 -o 'NCCL_NCHANNELS_PER_NET_PEER[^(]*' $A/$name.log) | $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$name.log)"; }
for i in 1 2; do pg c$i-gpu 2 sendrecv gpu 1M 512M; pg c$i-gpu-ch8 2 sendrecv gpu 1M 512M NCCL_NCHANNELS_PER_NET_PEER=8; pg c$i-gpu-ch2 2 sendrecv gpu 1M 512M NCCL_NCHANNELS_PER_NET_PEER=2; pg c$i-host 2 sendrecv host 1M 512M; done
el done
