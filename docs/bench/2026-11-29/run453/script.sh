#!/bin/bash
# run453 (one H200): the collectives beside point-to-point LL (item 5): 526bfffd (dist/c108)
# against main 483bc747 (dist/c104), host buffers, 8 B-64 KiB (x4, -n 500 -w 100), 3 rounds each:
# all_reduce, all_gather, reduce_scatter at 2 ranks, all_reduce at 4. NCCL gives collectives' own
# connections LL buffers either way; the two variables reach point-to-point ones only (net.cc,
# enqueue.cc), so these should not move beyond the spread. GPU 0 under MPS.
cd "$(dirname "$0")/.."; A=/tmp/run453; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; for v in c104 c108; do echo "$v: $(cat dist/$v/commit.txt)" >> $A/machine.txt; done
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 16
mps_on
args=(-b 8 -e 64K -f 4 -n 500 -w 100)
for op in all_reduce all_gather reduce_scatter; do rounds 2 3 $op "c104 c108" "${args[@]}"; done
rounds 4 3 all_reduce "c104 c108" "${args[@]}"
mps_off
el done
