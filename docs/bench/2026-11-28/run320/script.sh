#!/bin/bash
# run320 (a 4-GPU host, one rank per GPU, 4 ranks then 3): run 319's all_reduce on 1 channel again,
# alone: at 4 ranks 1-2 MiB (shares of 256-512 KiB) took 686 and 1055 us on 1 channel against 919
# and 1151 on 2 (Socket's best 557, 775), 4 MiB 1677 against 1542, while at 2 ranks 1 channel cost
# 1-2 MiB 18-26 %. dist/c46 (main) against dist/c47 (exp-band-one-channel.patch) and Socket 1x1 and
# 2x2 (run 319's best tunings), all_reduce 512 KiB-4 MiB, 100 iterations, --cycles 3, --repeat 3.
cd "$(dirname "$0")/.."; A=/tmp/run320; source dist/common.sh
start_run; for c in c46 c47; do echo "$c: $(cat dist/$c/commit.txt)" >> $A/machine.txt; done
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
C47=NCCL_NET_PLUGIN=$PWD/dist/c47/libnccl-net-tcpxr.so
for np in 4 3; do
  CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((np-1))) timeout 120 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c46 --mpirun --ranks $np --ops all_reduce --min 512K --max 4M --iters 100 --warmup 10 --timeout 60 --repeat 3 --cycles 3 \
    --configs tcpxr-host,tcpxr-host+one,socket-1x1,socket-2x2 --variant one:$C47 --out $A/r$np > $A/r$np.txt 2>&1
  el "r$np rc=$? $(grep -c ' ok, ' $A/r$np.txt) ok, $(grep -c FAILED $A/r$np.txt) failed"
  rm -rf $A/r$np/r*/logs
done
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
