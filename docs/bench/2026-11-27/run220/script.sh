#!/bin/bash
# run220 (a 4-GPU host, 64 cores; 2026-11-27, twenty-fourth session; the session's last 120 s of
# device time): where run 218's socket-buffer gain peaks. tcpxr-bench ring (dist/new, a2215065),
# 8 channels, 512 KiB, 3 s, 4 ranks then 2: NCCL_TCPXR_SOCKET_SNDBUF = _RCVBUF of 128 KiB, 256 KiB,
# 512 KiB, and the defaults (autotuning). One pass; written straight into $OUT.
cd "$(dirname "$0")/.."; A=${OUT:-/tmp}/run220; source dist/common.sh
{ date -u; nproc; cat dist/new/commit.txt; uptime; } > $A/machine.txt 2>&1
B=dist/new/tcpxr-bench
ring(){ local name=$1 np=$2 envs=$3; shift 3; timeout 20 env $envs $B ring --ranks $np --channels 8 --size 512K --seconds 3 --no-baseline > $A/$name.txt 2>&1
  el "$name rc=$? $(grep -a -E '^ +(tcpxr|tcp x[0-9]+) +all' $A/$name.txt | tr -s ' ' | paste -sd';')"; }
for np in 4 2; do for b in 128K 256K 512K auto; do
  e=""; [ $b != auto ] && e="NCCL_TCPXR_SOCKET_SNDBUF=$b NCCL_TCPXR_SOCKET_RCVBUF=$b"
  ring r-$np-$b $np "$e"
done; done
el done
