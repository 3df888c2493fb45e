#!/bin/bash
# run342 (one H200, or GPU 0 of any lent machine; prepared in session 40, not run): main's head
# (dist/c53 = a998f6dd: the tree-LL row of c36cd4b2 with the two LL decisions folded into one,
# Decision::Ll { from, to }, the same choices by the unit tests) on the GPU:
#  tune: NCCL's choices for all_reduce 512 B-16 KiB at 3 and 4 ranks under MPS (TUNING log): the
#        tree's LL at 512 B-4 KiB and the ring's LL from 8 KiB at both, as runs 333 and 336 found
#        for the row before the fold;
#  checks on c53: 3 and 4 ranks under MPS, host and GPU buffers, NCCL's choice, Ring, Tree; 4 ranks
#        with CUDA_DEVICE_MAX_CONNECTIONS=1; all_reduce and sendrecv, -c 1.
cd "$(dirname "$0")/.."; A=/tmp/run342; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c53: $(cat dist/c53/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
for np in 3 4; do
  timeout 60 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c53 --one-gpu --mps --ranks $np --ops all_reduce --min 512 --max 16K --iters 2 --warmup 1 --timeout 25 \
    --configs tcpxr-host --env NCCL_DEBUG_SUBSYS=INIT,NET,TUNING --out $A/tune$np > $A/tune$np.txt 2>&1
  grep -h "AllReduce:" $A/tune$np/logs/all_reduce.tcpxr-host.* | sed 's/^.*NCCL INFO //' | sort | uniq -c > $A/tune$np-tcpxr-host.txt
  el "tune $np ranks: $(awk '{print $3, $7, $9}' $A/tune$np-tcpxr-host.txt | sort -n | paste -sd';')"
  rm -rf $A/tune$np/logs
done
checks dist/c53
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
