#!/bin/bash
# run319 (a 4-GPU host, 4 ranks then 2, one per GPU): the tuner's 2-channel rows (all_reduce shares
# of 256 KiB-2 MiB, all_gather and reduce_scatter 256 KiB-1 MiB) on 1 channel. At 4 ranks all_reduce
# 512 KiB-2 MiB stood at 0.79-0.95 of Socket's best (run 311) and all_gather, reduce_scatter 1 MiB at
# 0.80-0.86 (run 316); a 1 MiB all_gather took 95-105 us more than 512 KiB (on 1 channel), Socket
# 35-48 more. dist/c46 = main against dist/c47 = main + dist/exp-band-one-channel.patch and
# Socket's four tunings; all_reduce, all_gather, reduce_scatter 256 KiB-4 MiB, 100 iterations,
# --cycles 3, host buffers, -c 1; --repeat 3 at 4 ranks, 2 at 2.
cd "$(dirname "$0")/.."; A=/tmp/run319; source dist/common.sh
start_run; for c in c46 c47; do echo "$c: $(cat dist/$c/commit.txt)" >> $A/machine.txt; done
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
C47=NCCL_NET_PLUGIN=$PWD/dist/c47/libnccl-net-tcpxr.so
for np in 4 2; do
  rep=3; [ $np = 2 ] && rep=2
  CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((np-1))) timeout 250 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c46 --mpirun --ranks $np --ops all_reduce,all_gather,reduce_scatter --min 256K --max 4M --iters 100 --warmup 10 --timeout 60 --repeat $rep --cycles 3 \
    --configs tcpxr-host,tcpxr-host+one,socket,socket-1x1,socket-2x2,socket-4x4 --variant one:$C47 --out $A/r$np > $A/r$np.txt 2>&1
  el "r$np rc=$? $(grep -c ' ok, ' $A/r$np.txt) ok, $(grep -c FAILED $A/r$np.txt) failed"
  rm -rf $A/r$np/r*/logs
done
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
