#!/bin/bash
# run303 (a 4-GPU host, one rank per GPU): in run 302 the tree's all_reduce of 32 KiB took 6-29 %
# longer with dist/c40 (main 5ceedb9e + the ring's LL for 2-8 KiB shares on 3-4 ranks) than with
# dist/c36 (fabe4c6f) in every pass, even run alone (no ring before it). Is it the row or the
# build? dist/c41 is main without the row. all_reduce 4-64 KiB, host buffers, 200 iterations,
# c40 / c41 / c36 alternated by --repeat: 4 passes at 4 ranks, 3 at 3; then NCCL's choices
# (NCCL_DEBUG_SUBSYS=TUNING) for 4-64 KiB at 4 ranks with c36 and c40.
cd "$(dirname "$0")/.."; A=/tmp/run303; source dist/common.sh
start_run; for c in c36 c40 c41; do echo "$c: $(cat dist/$c/commit.txt)"; done >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
OLD=NCCL_NET_PLUGIN=$PWD/dist/c36/libnccl-net-tcpxr.so; MAIN=NCCL_NET_PLUGIN=$PWD/dist/c41/libnccl-net-tcpxr.so
for np in 4 3; do
  CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((np-1))) timeout 150 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c40 --mpirun --ranks $np --ops all_reduce --min 4K --max 64K --iters 200 --warmup 20 --timeout 30 --repeat $((8-np)) \
    --configs tcpxr-host,tcpxr-host+main,tcpxr-host+old --variant old:$OLD --variant main:$MAIN --out $A/r$np > $A/r$np.txt 2>&1
  el "r$np rc=$? $(grep -c ' ok, ' $A/r$np.txt) ok, $(grep -c FAILED $A/r$np.txt) failed"
  rm -rf $A/r$np/r*/logs
done
for c in c36 c40; do
  timeout 25 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/$c --mpirun --ranks 4 --ops all_reduce --min 4K --max 64K --iters 2 --warmup 1 --timeout 20 \
    --configs tcpxr-host --env NCCL_DEBUG_SUBSYS=INIT,NET,TUNING --out $A/t-$c > $A/t-$c.txt 2>&1
  grep -h "AllReduce:" $A/t-$c/logs/all_reduce.tcpxr-host.* | sed -E 's/^.*NCCL INFO //; s/0x[0-9a-f]+//g; s/opCount [0-9a-f]+//' | sort | uniq -c > $A/tuning-choices-$c.txt 2>&1
  rm -rf $A/t-$c/logs
done
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
