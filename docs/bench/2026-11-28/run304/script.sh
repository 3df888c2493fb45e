#!/bin/bash
# run304 (a 4-GPU host, 4 ranks one per GPU): run 303 showed the tree's all_reduce of 32 KiB 11-18 %
# slower after the ring's LL ran 8-16 KiB (dist/c40) than with main (dist/c41), where the same
# sizes ran in the tree. What differs on tcpxr's side: every connection's counters at close
# (NCCL_TCPXR_STATS=1) for 4-32 KiB with c41 and c40, and 32 KiB alone with c40; 200 iterations,
# host buffers, two passes alternated. Logs kept.
cd "$(dirname "$0")/.."; A=/tmp/run304; source dist/common.sh
start_run; for c in c40 c41; do echo "$c: $(cat dist/$c/commit.txt)"; done >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
for pass in 1 2; do for v in c41 c40 c40alone; do
  lib=${v%alone}; lo=4K; [ $v = c40alone ] && lo=32K
  timeout 30 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/$lib --mpirun --ranks 4 --ops all_reduce --min $lo --max 32K --iters 200 --warmup 20 --timeout 20 \
    --configs tcpxr-host --env NCCL_TCPXR_STATS=1 --out $A/$v-$pass > $A/$v-$pass.txt 2>&1
  el "$v pass $pass: 32K $(awk '/^ +32768 /{print $6}' $A/$v-$pass/all_reduce.tcpxr-host.txt) us; $(cat $A/$v-$pass/logs/* | grep -c 'stats ') stats lines"
done; done
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
