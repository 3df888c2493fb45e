#!/bin/bash
# run300 (a 4-GPU host, one rank per GPU): run 299's row (the ring for 2-8 KiB shares) made 8-16 KiB
# 25-48 % faster at 3 and 4 ranks but the tree's 32 KiB after it 15-24 % slower. dist/c38: every
# all_reduce share below 16 KiB on 3-4 ranks in the ring's LL where NCCL would run the tree's LL,
# against main fabe4c6f (dist/c36) through NCCL_NET_PLUGIN and Socket's default; host buffers,
# all_reduce 8 B-64 KiB, 200 iterations, two passes, at 4 and at 3 ranks; NCCL's choices at 4.
# Then: is run 299's slower tree at 32 KiB the ring before it in the same process? dist/c37 (run
# 299's form) at 4 ranks, all_reduce of 32 KiB alone (-b 32K -e 32K) against 4-32 KiB, two passes.
cd "$(dirname "$0")/.."; A=/tmp/run300; source dist/common.sh
start_run; echo "c36: $(cat dist/c36/commit.txt); c38: $(cat dist/c38/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
OLD=NCCL_NET_PLUGIN=$PWD/dist/c36/libnccl-net-tcpxr.so
timeout 70 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c38 --mpirun --ranks 4 --ops all_reduce --min 8 --max 64K --iters 200 --warmup 20 --timeout 30 --repeat 2 \
  --configs tcpxr-host,tcpxr-host+old,socket --variant old:$OLD --out $A/r4 > $A/r4.txt 2>&1
el "r4 rc=$? $(grep -c ' ok, ' $A/r4.txt) ok, $(grep -c FAILED $A/r4.txt) failed"
rm -rf $A/r4/r*/logs
CUDA_VISIBLE_DEVICES=0,1,2 timeout 60 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c38 --mpirun --ranks 3 --ops all_reduce --min 8 --max 64K --iters 200 --warmup 20 --timeout 30 --repeat 2 \
  --configs tcpxr-host,tcpxr-host+old,socket --variant old:$OLD --out $A/r3 > $A/r3.txt 2>&1
el "r3 rc=$? $(grep -c ' ok, ' $A/r3.txt) ok, $(grep -c FAILED $A/r3.txt) failed"
rm -rf $A/r3/r*/logs
timeout 25 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c38 --mpirun --ranks 4 --ops all_reduce --min 8 --max 64K --iters 2 --warmup 1 --timeout 20 \
  --configs tcpxr-host --env NCCL_DEBUG_SUBSYS=INIT,NET,TUNING --out $A/t4 > $A/t4.txt 2>&1
grep -h "AllReduce:" $A/t4/logs/all_reduce.tcpxr-host.* | sed -E 's/^.*NCCL INFO //; s/0x[0-9a-f]+//g; s/opCount [0-9a-f]+//' | sort | uniq -c > $A/tuning-choices.txt 2>&1
rm -rf $A/t4/logs
R37=NCCL_NET_PLUGIN=$PWD/dist/c37/libnccl-net-tcpxr.so
for pass in 1 2; do for lo in 32K 4K; do
  timeout 30 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c38 --mpirun --ranks 4 --ops all_reduce --min $lo --max 32K --iters 200 --warmup 20 --timeout 20 \
    --configs tcpxr-host+r37 --variant r37:$R37 --out $A/order-$lo-$pass > $A/order-$lo-$pass.txt 2>&1
  el "order from $lo pass $pass: $(awk '/^ +32768 /{print $6}' $A/order-$lo-$pass/all_reduce.tcpxr-host+r37.txt)"
done; done
rm -rf $A/order-*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
