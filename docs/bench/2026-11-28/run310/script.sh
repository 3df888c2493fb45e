#!/bin/bash
# run310 (a 2- or 4-GPU host, 2 ranks on GPUs 0-1): run 301's write-combined bounce memory made
# sendrecv with GPU buffers faster in most passes but within the launch-to-launch spread, and no
# faster without demote. Is it the write-combining or the allocation (one cuMemHostAlloc block
# instead of mmap'd sections registered with cuMemHostRegister)? dist/c43 = main +
# dist/exp-bounce-wc2.patch: TCPXR_EXP_BOUNCE_WC_MIB=1024 as in run 301, plus
# TCPXR_EXP_BOUNCE_CACHED=1 for the same block cached. sendrecv 8-512 MiB, 10 iterations, five
# passes alternated: host buffers, GPU buffers, GPU + WC, GPU + cached block.
cd "$(dirname "$0")/.."; A=/tmp/run310; source dist/common.sh
start_run; echo "c43: $(cat dist/c43/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
CUDA_VISIBLE_DEVICES=0,1 timeout 560 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c43 --mpirun --ranks 2 --ops sendrecv --min 8M --max 512M --iters 10 --warmup 3 --timeout 90 --repeat 5 \
  --configs tcpxr-host,tcpxr-gpu,tcpxr-gpu+wc,tcpxr-gpu+cached --variant wc:TCPXR_EXP_BOUNCE_WC_MIB=1024 --variant cached:TCPXR_EXP_BOUNCE_WC_MIB=1024 --variant cached:TCPXR_EXP_BOUNCE_CACHED=1 --out $A/s > $A/s.txt 2>&1
el "s rc=$? $(grep -c ' ok, ' $A/s.txt) ok, $(grep -c FAILED $A/s.txt) failed; $(grep -h -o 'EXPERIMENT: bounce memory is [^,]*' $A/s/r1/logs/* 2>/dev/null | sort | uniq -c | tr '\n' ' ')"
rm -rf $A/s/r[2-5]/logs
el "wrong: $(grep -h 'Out of bounds values' $A/s/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
