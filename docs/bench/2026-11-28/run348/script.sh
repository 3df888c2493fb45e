#!/bin/bash
# run348 (one H200 or GPU 0 of any lent machine): the candidate dist/c55 (exp-peer-ahead: irecv
# makes its progress pass only while the sender is ahead, i.e. the last header was already
# waiting when first read for; main's pass at every irecv helped 4 ranks on one H200, run 344,
# and cost 2 ranks on 32 cores, run 343) touches the receive path of every transport and buffer:
#  checks on c55: 3 and 4 ranks under MPS, host and GPU buffers, NCCL's choice, Ring, Tree; 4 ranks
#        with CUDA_DEVICE_MAX_CONNECTIONS=1; all_reduce and sendrecv, -c 1;
#  s4:   4 ranks on GPU 0 under MPS, the four ops 8 B-64 KiB, c55 against main (c53) and Socket
#        default, 200 iterations, -N 3, two passes alternated (run 344's shape).
cd "$(dirname "$0")/.."; A=/tmp/run348; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c53: $(cat dist/c53/commit.txt); c55: $(cat dist/c55/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
checks dist/c55
timeout 300 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c53 --one-gpu --mps --ranks 4 --ops all_reduce,all_gather,reduce_scatter,sendrecv --min 8 --max 64K --iters 200 --warmup 20 --cycles 3 --timeout 40 --repeat 2 \
  --configs tcpxr-host,tcpxr-host+ahead,socket --variant ahead:NCCL_NET_PLUGIN=$PWD/dist/c55/libnccl-net-tcpxr.so --out $A/s4 > $A/s4.txt 2>&1
el "s4 rc=$? $(grep -c ' ok, ' $A/s4.txt) ok, $(grep -c FAILED $A/s4.txt) failed"
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
