#!/bin/bash
# run409 (one H200, session 50): the company rule (dist/c86: 7b99805f + src/engine/company.rs, a
# thread's mid-sized messages sent in company are all striped until one travels alone) against
# main (dist/c85), host buffers, ranks on GPU 0 under MPS, 2 and 4 ranks, all_reduce and sendrecv,
# 16 KiB-2 MiB, 50 iterations, --cycles 3, three passes rotated; Socket default and 1x1 beside
# (run 408's best at 256 KiB). Then the correctness set on dist/c86.
cd "$(dirname "$0")/.."; A=/tmp/run409; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "main: $(cat dist/c85/commit.txt)" >> $A/machine.txt
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
for np in 2 4; do
  timeout 280 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c86 --one-gpu --mps --ranks $np --ops all_reduce,sendrecv --min 16K --max 2M --iters 50 --warmup 10 --cycles 3 --timeout 60 --repeat 3 \
    --configs tcpxr-host,tcpxr-host+main,socket,socket-1x1 --variant main:NCCL_NET_PLUGIN=$PWD/dist/c85/libnccl-net-tcpxr.so --out $A/ab-$np > $A/ab-$np.txt 2>&1
  el "ab $np ranks rc=$? $(grep -c ' ok, ' $A/ab-$np.txt) ok, $(grep -c FAILED $A/ab-$np.txt) failed"
done
checks dist/c86
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
