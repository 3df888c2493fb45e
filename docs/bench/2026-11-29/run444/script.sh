#!/bin/bash
# run444 (one H200, prepared in session 55): item 2's 8 MiB at 2 ranks. NCCL's ring Simple runs an
# all_reduce of 8 MiB on the tuner's 4 channels as one loop a channel (a 1 MiB chunk a rank, two
# 512 KiB slices a half), so little pipelines it; NCCL's buffer at 1 MiB makes two loops (256 KiB
# slices). At 2 MiB the 8 MiB all_reduce keeps the same slices (a control: run 414's 4.5 % there was
# the spread) and 64 MiB, on NCCL's 8 channels, halves them (run 414: 8 % faster by two passes). Main (dist/c104 = 483bc747), +buf2m and +buf1m (NCCL_BUFFSIZE) against Socket 1x1
# and 2x2: all_reduce, all_gather, reduce_scatter 4-64 MiB (x2), -n 20 -w 5, first cycle; 8 rounds,
# each one launch of each in rotated order; 2 ranks on GPU 0 under MPS, host buffers. Then the
# correctness set on main itself (75156293's constructor refactor has run it only beside experiments).
cd "$(dirname "$0")/.."; A=/tmp/run444; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c104: $(cat dist/c104/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 16
mps_on
declare -A VENV=([buf1m]="NCCL_BUFFSIZE=1048576" [buf2m]="NCCL_BUFFSIZE=2097152")
for op in all_reduce all_gather reduce_scatter; do
  rounds 2 8 $op "c104 s1x1 c104+buf1m s2x2 c104+buf2m" -b 4M -e 64M -f 2 -n 20 -w 5; done
mps_off
checks dist/c104
rm -rf $A/check-*/logs $A/check-*/mps-log
el done
