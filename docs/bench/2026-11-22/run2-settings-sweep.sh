#!/bin/bash
# Device run 2: which plugin-side settings move all_reduce / sendrecv at 64-512 MiB.
# Needs an nccl-tests build (MPI=0) at ncclTests/nccl-tests/build, made by the user (see ncclTests/README.md).
export NCCL_NVLS_ENABLE=0 LD_LIBRARY_PATH=$PWD/dist:$LD_LIBRARY_PATH
B=ncclTests/nccl-tests/build
base="NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT"
run() { # label, env...
  label=$1; shift
  for op in all_reduce sendrecv; do
    env $base "$@" timeout 100 $B/${op}_perf -g 2 -b 64M -e 512M -f 2 -c 1 -n 10 -w 3 > $OUT/$label.$op.txt 2>&1
    ch=$(grep -m1 -oE "[0-9]+ coll channels" $OUT/$label.$op.txt)
    rows=$(grep -E "^ +[0-9]+ " $OUT/$label.$op.txt | awk '{printf "%s:%s/%s ", $1/1048576, $8, $9}')
    echo "$label $op [$ch] $rows"
  done
}
run socket4x4 NCCL_NET=Socket NCCL_NSOCKS_PERTHREAD=4 NCCL_SOCKET_NTHREADS=4
run tcpxr-default NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr
run tcpxr-c128k NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr NCCL_TCPXR_CHUNK_BYTES=128K
run tcpxr-c128k-s8 NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr NCCL_TCPXR_CHUNK_BYTES=128K NCCL_TCPXR_STRIPES=8
run tcpxr-c64k-s8 NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr NCCL_TCPXR_CHUNK_BYTES=64K NCCL_TCPXR_STRIPES=8
run tcpxr-speed400 NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr NCCL_TCPXR_SPEED_MBPS=400000
run tcpxr-speed400-c128k NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr NCCL_TCPXR_SPEED_MBPS=400000 NCCL_TCPXR_CHUNK_BYTES=128K
run tcpxr-speed10 NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr NCCL_TCPXR_SPEED_MBPS=10000
run tcpxr-minch8 NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr NCCL_MIN_NCHANNELS=8
run socket4x4-minch8 NCCL_NET=Socket NCCL_NSOCKS_PERTHREAD=4 NCCL_SOCKET_NTHREADS=4 NCCL_MIN_NCHANNELS=8
