#!/bin/bash
# run213 (a 4-GPU host, 64 cores; prepared 2026-11-27 in the twenty-third session): the owed
# four-rank figures for a2215065's pool cap (auto 10 I/O threads a rank where it was 8; runs
# 210-212 measured 2 ranks on 32 cores, run 181 four ranks on older code). (1) tcpxr-bench ring at
# 4 ranks, 8 channels, 512 KiB and 4 MiB, beside the fair TCP rings (aeb1ad9: readers fill as many
# buffers as tcpxr's receives) of 4-32 connections; (2) nccl-tests all four collectives 256 KiB-
# 512 MiB, 4 ranks one per GPU, 20 iterations: tcpxr (dist/new, a2215065) at its defaults (10)
# and with NCCL_TCPXR_IO_THREADS=8, A B B A, then all four Socket tunings once for the ratios.
cd "$(dirname "$0")/.."; A=/tmp/run213; source dist/common.sh
start_run
cat dist/new/commit.txt >> $A/machine.txt
tests_228
for s in 512K 4M; do
  timeout 90 dist/new/tcpxr-bench ring --ranks 4 --channels 8 --size $s --seconds 3 --tcp-connections 4,8,16,32 > $A/ring-$s.txt 2>&1
  el "ring $s rc=$? $(grep -a -E '^ +(tcpxr|tcp x[0-9]+) +all' $A/ring-$s.txt | tr -s ' ' | paste -sd';') | $(grep -a '^ceiling' $A/ring-$s.txt)"
done
r(){ local out=$1; shift
  timeout 280 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/new --mpirun --ranks 4 --ops all_reduce,all_gather,reduce_scatter,sendrecv --min 256K --max 512M --iters 20 --warmup 5 --timeout 60 --out $A/$out "$@" > $A/$out.txt 2>&1
  el "$out rc=$? $(grep -c ' ok, ' $A/$out.txt) ok, $(grep -c FAILED $A/$out.txt) failed"; }
r a1 --configs tcpxr-host; r b1 --configs tcpxr-host --env NCCL_TCPXR_IO_THREADS=8
r b2 --configs tcpxr-host --env NCCL_TCPXR_IO_THREADS=8; r a2 --configs tcpxr-host
r socket --configs socket,socket-1x1,socket-2x2,socket-4x4
# Correctness with 10 threads a rank at 4 ranks (a 3-4 rank check on one GPU keeps 2-3 threads):
# all_reduce and sendrecv 8 B-32 MiB -c 1, host and GPU buffers, NCCL's choice, Ring, Tree.
for algo in NCCL Ring Tree; do
  al=(); [ $algo != NCCL ] && al=(--algo $algo)
  timeout 150 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/new --mpirun --ranks 4 "${al[@]}" --ops all_reduce,sendrecv --configs tcpxr-host,tcpxr-gpu --max 32M --iters 2 --warmup 1 --timeout 60 --out $A/check-$algo > $A/check-$algo.txt 2>&1
  el "check 4 ranks one per GPU $algo rc=$? $(grep -c ' ok, ' $A/check-$algo.txt) ok, $(grep -c FAILED $A/check-$algo.txt) failed"
done
el done
