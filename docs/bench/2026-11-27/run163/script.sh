#!/bin/bash
# run163 (the 4-GPU host of run162, right after it; nccl-tests against NCCL 2.28.3 built there by
# run162 in /tmp/nt-2.28.3), issue 31's 1-4 MiB band at 4 ranks, one per GPU: does a message of
# the band go faster cut into more, smaller chunks (more stripes at work on each ring step, as
# Socket 2x2 splits each message over 4 sockets)? all_reduce and all_gather 512 KiB-64 MiB, 30
# iterations, -c 0, alternated twice: tcpxr as is (4 stripes, 512 KiB chunks), chunks of 256 KiB
# and 128 KiB, 2 and 8 stripes; Socket 1x1, 2x2 and default.
cd "$(dirname "$0")/.."; A=/tmp/run163; source dist/common.sh
export CUDA_VISIBLE_DEVICES=0,1,2,3
fin(){ tar cJf $R/run163.tar.xz -C /tmp run163; }; trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
NT=/tmp/nt-2.28.3/build
[ -x $NT/all_reduce_perf ] || { (rm -rf /tmp/nt-2.28.3 && cp -r ncclTests/nccl-tests /tmp/nt-2.28.3 && cd /tmp/nt-2.28.3 && make -j32 MPI=1 MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi CUDA_HOME=/usr/local/cuda NCCL_HOME=/usr NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" > $A/nt-build.txt 2>&1); el "nccl-tests build rc=$?"; }
PG_SIZES="-b 512K -e 64M" PG_ITERS=30  # pg: common.sh
for i in 1 2; do for op in all_reduce all_gather; do
  pg r$i-$op-tcpxr $op host; pg r$i-$op-chunk256k $op host NCCL_TCPXR_CHUNK_BYTES=256K; pg r$i-$op-chunk128k $op host NCCL_TCPXR_CHUNK_BYTES=128K
  pg r$i-$op-stripes2 $op host NCCL_TCPXR_STRIPES=2; pg r$i-$op-stripes8 $op host NCCL_TCPXR_STRIPES=8
  pg r$i-$op-socket $op socket; pg r$i-$op-socket1x1 $op socket NCCL_SOCKET_NTHREADS=1 NCCL_NSOCKS_PERTHREAD=1; pg r$i-$op-socket2x2 $op socket NCCL_SOCKET_NTHREADS=2 NCCL_NSOCKS_PERTHREAD=2; done; done
el done
