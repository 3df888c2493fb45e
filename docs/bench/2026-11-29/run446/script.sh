#!/bin/bash
# run446 (one H200): item 2's 8 MiB at 2 ranks on 2 channels. Run 444: NCCL's 1 MiB buffer (twice
# the messages, half the size) made the 8 MiB all_reduce 18 % slower, so per-message cost, not the
# pipeline's depth, bounds it. On 2 channels instead of the tuner's 4 each message is twice the
# size (1 MiB slices), and tcpxr stripes each message over its lanes anyway. Main (dist/c104 =
# 483bc747), +ch2 (NCCL_MAX_NCHANNELS=2: a user bound, so tcpxr sets no channels) and +ch2+b8 (and
# NCCL's buffer at 8 MiB) against Socket 1x1 and 2x2: all_reduce, all_gather, reduce_scatter 4-32
# MiB (x2), -n 20 -w 5, first cycle; 6 rounds, rotated; 2 ranks on GPU 0 under MPS, host buffers.
cd "$(dirname "$0")/.."; A=/tmp/run446; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c104: $(cat dist/c104/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 16
mps_on
declare -A VENV=([ch2]="NCCL_MAX_NCHANNELS=2" [b8]="NCCL_BUFFSIZE=8388608")
for op in all_reduce all_gather reduce_scatter; do
  rounds 2 6 $op "c104 s1x1 c104+ch2 s2x2 c104+ch2+b8" -b 4M -e 32M -f 2 -n 20 -w 5; done
mps_off
el done
