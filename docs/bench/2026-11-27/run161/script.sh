#!/bin/bash
# run161 (4-GPU host), issue 31's weakest band at 4 ranks (run 160: 1-4 MiB at 0.66-0.85 of Socket's
# best): 4 ranks one per GPU, NCCL 2.28.3, all_reduce and all_gather 256 KiB-16 MiB, 20 iterations,
# -c 0, alternated twice: tcpxr as is (its tuner: the ring in Simple on 2 channels for per-rank
# shares of 256 KiB-2 MiB, at most 4 below 32 MiB; NCCL_MIN_NCHANNELS=8), tcpxr with its tuner off
# (NCCL's own choice on the 4 channels NCCL builds), tuner off with NCCL_MIN_NCHANNELS=8, Socket 1x1
# and Socket 2x2 (the Socket tunings that won this band in run 160).
cd "$(dirname "$0")/.."; A=/tmp/run161; source dist/common.sh
export CUDA_VISIBLE_DEVICES=0,1,2,3
fin(){ tar cJf $R/run161.tar.xz -C /tmp run161; }; trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
(cd ncclTests/nccl-tests && make -j32 MPI=1 MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi CUDA_HOME=/usr/local/cuda NCCL_HOME=/usr NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" > $A/nccl-tests-build.txt 2>&1); el "nccl-tests (2.28.3) build rc=$?"
PG_SIZES="-b 256K -e 16M" PG_ITERS=20  # pg: common.sh
for i in 1 2; do for op in all_reduce all_gather; do
  pg r$i-$op-tcpxr $op host; pg r$i-$op-notuner $op host NCCL_TCPXR_TUNER=0; pg r$i-$op-notuner8 $op host NCCL_TCPXR_TUNER=0 NCCL_MIN_NCHANNELS=8
  pg r$i-$op-socket1x1 $op socket NCCL_SOCKET_NTHREADS=1 NCCL_NSOCKS_PERTHREAD=1; pg r$i-$op-socket2x2 $op socket NCCL_SOCKET_NTHREADS=2 NCCL_NSOCKS_PERTHREAD=2; done; done
el done
