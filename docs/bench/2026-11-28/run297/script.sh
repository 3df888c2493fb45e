#!/bin/bash
# run297 (a 2-GPU host): the tuner row of run 296's finding (dist/c36: main 8be9ac76 + where NCCL's
# kernel places a process's collective receives from host memory, shares of 4-32 MiB keep NCCL's
# own count of the 8 built channels instead of 4), against main (dist/c35) through NCCL_NET_PLUGIN.
# 1. The 3-4-rank correctness set with c36 (checks: the row acts at 16-32 MiB there).
# 2. 2 ranks one per GPU, all_reduce, all_gather, reduce_scatter 4-128 MiB, 20 iterations, three
#    passes: host buffers, GPU buffers (c36), GPU buffers (c35).
# 3. 4 ranks on GPU 0 under MPS, all_reduce and all_gather 4-128 MiB, 20 iterations, two passes,
#    the same three configurations.
cd "$(dirname "$0")/.."; A=/tmp/run297; source dist/common.sh
start_run; echo "c35: $(cat dist/c35/commit.txt); c36: $(cat dist/c36/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
checks dist/c36
OLD=NCCL_NET_PLUGIN=$PWD/dist/c35/libnccl-net-tcpxr.so
CUDA_VISIBLE_DEVICES=0,1 timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c36 --mpirun --ranks 2 --ops all_reduce,all_gather,reduce_scatter --min 4M --max 128M --iters 20 --warmup 5 --timeout 60 --repeat 3 \
  --configs tcpxr-host,tcpxr-gpu,tcpxr-gpu+old --variant old:$OLD --out $A/g > $A/g.txt 2>&1
el "g rc=$? $(grep -c ' ok, ' $A/g.txt) ok, $(grep -c FAILED $A/g.txt) failed"
CUDA_VISIBLE_DEVICES=0 timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c36 --one-gpu --mps --ranks 4 --ops all_reduce,all_gather --min 4M --max 128M --iters 20 --warmup 5 --timeout 60 --repeat 2 \
  --configs tcpxr-host,tcpxr-gpu,tcpxr-gpu+old --variant old:$OLD --out $A/m > $A/m.txt 2>&1
el "m rc=$? $(grep -c ' ok, ' $A/m.txt) ok, $(grep -c FAILED $A/m.txt) failed"
grep -h "tuner\|Loaded net plugin" $A/g/r1/logs/all_reduce.tcpxr-gpu.nccl.* $A/g/r1/logs/all_reduce.tcpxr-gpu+old.nccl.* 2>/dev/null | sed 's/^.*NCCL INFO //' | sort | uniq -c | cut -c1-400 > $A/plugins.txt
rm -rf $A/g/r2/logs $A/g/r3/logs $A/m/r2/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
