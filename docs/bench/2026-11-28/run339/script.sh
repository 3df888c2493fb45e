#!/bin/bash
# run339 (2x H200, 32 cores; 2 ranks one per GPU): issue 31 item 4 on main (dist/c49 = ba328017;
# the tree's LL row since does not reach these sizes): GPU buffers (NCCL_TCPXR_GPU_BUFFERS=1,
# NCCL_NET_GDR_LEVEL=SYS, lo kept at 400 Gb/s for them) against host buffers (lo at 10 Gb/s since
# run 324), sendrecv and all_reduce 8-128 MiB, 20 iterations, -N 2 (steady state), three passes in
# alternated order. Item 4 was last measured before host buffers' 10 Gb/s report (runs 297-298).
cd "$(dirname "$0")/.."; A=/tmp/run339; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0,1; echo "c49: $(cat dist/c49/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
timeout 300 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c49 --mpirun --ranks 2 --ops sendrecv,all_reduce --min 8M --max 128M --iters 20 --warmup 3 --cycles 2 --timeout 60 --repeat 3 \
  --configs tcpxr-host,tcpxr-gpu --out $A/item4 > $A/item4.txt 2>&1
el "item4 rc=$? $(grep -c ' ok, ' $A/item4.txt) ok, $(grep -c FAILED $A/item4.txt) failed"
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
