#!/bin/bash
# run286 (a 4-GPU host, 64 cores): 4 ranks one per GPU, on main (dist/c34: 7a0a0c1a, library as 39b4bd9b).
#  a (the only part): the tuner's cap on NCCL's tree (ae27a273) where run 284 could not measure it: all_reduce
#     4-256 KiB, 200 iterations, three passes, main against 04fef03a (dist/c30, through
#     NCCL_NET_PLUGIN), Socket default and 1x1; NCCL's choices under main (TUNING, 2 iterations).
PART=${1:-a}
cd "$(dirname "$0")/.."; A=/tmp/run286$PART; source dist/common.sh
start_run; echo "c34: $(cat dist/c34/commit.txt); c30: $(cat dist/c30/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
case $PART in
  a) OLD=old:NCCL_NET_PLUGIN=$PWD/dist/c30/libnccl-net-tcpxr.so
     timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c34 --mpirun --ranks 4 --ops all_reduce --min 4K --max 256K --iters 200 --warmup 20 --timeout 30 --repeat 3 \
       --configs tcpxr-host,tcpxr-host+old,socket,socket-1x1 --variant $OLD --out $A/s4 > $A/s4.txt 2>&1
     el "s4 rc=$? $(grep -c ' ok, ' $A/s4.txt) ok, $(grep -c FAILED $A/s4.txt) failed"
     timeout 30 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c34 --mpirun --ranks 4 --ops all_reduce --min 4K --max 256K --iters 2 --warmup 1 --timeout 25 \
       --configs tcpxr-host --env NCCL_DEBUG_SUBSYS=INIT,NET,TUNING --out $A/tuning > $A/tuning.txt 2>&1
     grep -h "AllReduce:" $A/tuning/logs/* | sed 's/^.*NCCL INFO //' | sort | uniq -c > $A/tuning-choices.txt;;
esac
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
