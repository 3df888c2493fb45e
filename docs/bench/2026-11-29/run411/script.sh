#!/bin/bash
# run411 (one H200, session 50): 38d9f9a2 as committed (dist/c88: the company rule on point-to-point
# connections) against main 7b99805f (dist/c85) alone, four passes rotated, after run 410 had the
# 4-rank all_reduce (whose connections keep main's rule) at 1.01-1.18x main's time in most passes.
# Ranks on GPU 0 under MPS, host buffers: 4 ranks all_reduce and 2 ranks sendrecv, 16 KiB-2 MiB, 50
# iterations, --cycles 3.
cd "$(dirname "$0")/.."; A=/tmp/run411; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "main: $(cat dist/c85/commit.txt)" >> $A/machine.txt
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
for shape in 4:all_reduce 2:sendrecv; do IFS=: read np op <<< "$shape"
  timeout 150 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c88 --one-gpu --mps --ranks $np --ops $op --min 16K --max 2M --iters 50 --warmup 10 --cycles 3 --timeout 60 --repeat 4 \
    --configs tcpxr-host,tcpxr-host+main --variant main:NCCL_NET_PLUGIN=$PWD/dist/c85/libnccl-net-tcpxr.so --out $A/$op-$np > $A/$op-$np.txt 2>&1
  el "$op $np ranks rc=$? $(grep -c ' ok, ' $A/$op-$np.txt) ok, $(grep -c FAILED $A/$op-$np.txt) failed"
done
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
