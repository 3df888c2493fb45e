#!/bin/bash
# run218 (a 4-GPU host, 64 cores; 2026-11-27, twenty-fourth session): is tcpxr's copy slower per
# byte because more bytes wait in socket buffers? Run 205's profile (2 ranks, 8 channels, 512 KiB):
# the kernel's copies took about 1.5x the CPU per byte in tcpxr's I/O threads (_copy_to_iter 247,
# _copy_from_iter 190 ms a GB) that they took in plain TCP's (158, 128), and run 213's 4-rank ring
# moved 1.44 GB/s per busy core against plain TCP's 1.97. tcpxr has 4 stripes x 8 channels = 32
# autotuned sockets each way a rank, whose queued bytes may leave the cache before they are copied.
# tcpxr-bench ring (dist/new, a2215065), 8 channels, 512 KiB, 3 s, at 2 and 4 ranks: the defaults
# (B), socket buffers of 1 MiB and 256 KiB (NCCL_TCPXR_SOCKET_SNDBUF = _RCVBUF), 2 stripes with
# 1 MiB; plain TCP x8 and x16 each pass; two passes, the second in reverse order.
cd "$(dirname "$0")/.."; A=/tmp/run218; source dist/common.sh
start_run
B=dist/new/tcpxr-bench
ring(){ local name=$1 np=$2 envs=$3; shift 3; timeout 60 env $envs $B ring --ranks $np --channels 8 --size 512K --seconds 3 "$@" > $A/$name.txt 2>&1
  el "$name rc=$? $(grep -a -E '^ +(tcpxr|tcp x[0-9]+) +all' $A/$name.txt | tr -s ' ' | paste -sd';')"; }
V=("b:" "buf1m:NCCL_TCPXR_SOCKET_SNDBUF=1M NCCL_TCPXR_SOCKET_RCVBUF=1M" "buf256k:NCCL_TCPXR_SOCKET_SNDBUF=256K NCCL_TCPXR_SOCKET_RCVBUF=256K" "st2buf1m:NCCL_TCPXR_STRIPES=2 NCCL_TCPXR_SOCKET_SNDBUF=1M NCCL_TCPXR_SOCKET_RCVBUF=1M")
for np in 2 4; do
  ring tcp-r1-$np $np "" --tcp-connections 8,16
  for v in "${V[@]}"; do ring r1-$np-${v%%:*} $np "${v#*:}" --no-baseline; done
  for ((i=${#V[@]}-1; i>=0; i--)); do v=${V[$i]}; ring r2-$np-${v%%:*} $np "${v#*:}" --no-baseline; done
  ring tcp-r2-$np $np "" --tcp-connections 8,16
done
el done
