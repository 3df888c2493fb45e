#!/bin/bash
# run207 (a 2-GPU host, 32 cores; 2026-11-27, twenty-third session): the plain TCP ceiling with as
# many receive buffers as tcpxr's ring uses. Until now each TCP reader read every message into one
# buffer (8 connections: 4 MiB a rank, in cache), where tcpxr's receives (NCCL's staging, 8
# channels x 8 in flight x 512 KiB) span 32 MiB. tcpxr-bench ring of e4db58c (dist/prof, one
# buffer a reader) and of the change (dist/new2: channels x in-flight buffers dealt among the
# readers), alternated: 2 ranks at 512 KiB (twice) and 4 MiB, 4 ranks at 512 KiB (twice).
cd "$(dirname "$0")/.."; A=/tmp/run207; source dist/common.sh
trap "tar cJf $R/run207.tar.xz -C /tmp run207" EXIT
{ date -u; uname -r; nproc; cat dist/new/commit.txt dist/new2/commit.txt; uptime; } > $A/machine.txt 2>&1
ring(){ local name=$1 bin=$2; shift 2; timeout 120 $bin ring --channels 8 --seconds 3 "$@" > $A/$name.txt 2>&1
  el "$name rc=$? $(grep -E '^ +(tcpxr|tcp x[0-9]+) +all' $A/$name.txt | tr -s ' ' | paste -sd';')"; }
for i in 1 2; do
  ring r$i-2r512k-old dist/prof/tcpxr-bench-sym --ranks 2 --size 512K --tcp-connections 8,16,32
  ring r$i-2r512k-new dist/new2/tcpxr-bench-sym --ranks 2 --size 512K --tcp-connections 8,16,32
  ring r$i-4r512k-old dist/prof/tcpxr-bench-sym --ranks 4 --size 512K --tcp-connections 4,8,16
  ring r$i-4r512k-new dist/new2/tcpxr-bench-sym --ranks 4 --size 512K --tcp-connections 4,8,16
done
ring r1-2r4m-old dist/prof/tcpxr-bench-sym --ranks 2 --size 4M --tcp-connections 8,16
ring r1-2r4m-new dist/new2/tcpxr-bench-sym --ranks 2 --size 4M --tcp-connections 8,16
el done
