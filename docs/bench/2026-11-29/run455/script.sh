#!/bin/bash
# run455 (2x H200, one rank per GPU): item 1's sendrecv of 8 B-64 KiB with point-to-point LL,
# 526bfffd (dist/c108), beside main 483bc747 (dist/c104) and Socket's four tunings, 3 rounds
# (-n 1000 -w 200, x2 sizes). No MPS: each rank has its GPU.
cd "$(dirname "$0")/.."; A=/tmp/run455; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0,1 PER_GPU=1; for v in c104 c108; do echo "$v: $(cat dist/$v/commit.txt)" >> $A/machine.txt; done
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 32
rounds 2 3 sendrecv "c108 c104 socket s1x1 s2x2 s4x4" -b 8 -e 64K -f 2 -n 1000 -w 200
el done
