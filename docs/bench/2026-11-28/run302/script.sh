#!/bin/bash
# run302 (a 4-GPU host, one rank per GPU). Run 300: the ring's LL for every all_reduce share below
# 16 KiB on 3-4 ranks (dist/c38) won 8-16 KiB (4 ranks) and 8-32 KiB (3 ranks) but lost 8 B-4 KiB
# (more steps than the tree); and the tree's 32 KiB alone took 161 us but 183-204 after the ring
# (run 299's form, dist/c37). dist/c40: the ring's LL only for shares of 2 KiB to under 8 KiB, where
# NCCL would run the tree's LL. 1. c40 against main (c36) and Socket's default, host buffers,
# all_reduce 8 B-64 KiB, 200 iterations, three passes, at 4 and 3 ranks; GPU buffers one pass.
# 2. Why a tree after the ring is slower: 32 KiB alone against 4-32 KiB with c36 (no ring: the
# control), c40, and c40 with NCCL_RUNTIME_CONNECT=0 (every connection made at init), alternated,
# three passes; Socket 8 B-64 KiB with and without NCCL_RUNTIME_CONNECT=0.
cd "$(dirname "$0")/.."; A=/tmp/run302; source dist/common.sh
start_run; echo "c36: $(cat dist/c36/commit.txt); c40: $(cat dist/c40/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
OLD=NCCL_NET_PLUGIN=$PWD/dist/c36/libnccl-net-tcpxr.so
for np in 4 3; do
  CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((np-1))) timeout 100 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c40 --mpirun --ranks $np --ops all_reduce --min 8 --max 64K --iters 200 --warmup 20 --timeout 30 --repeat 3 \
    --configs tcpxr-host,tcpxr-host+old,socket --variant old:$OLD --out $A/r$np > $A/r$np.txt 2>&1
  el "r$np rc=$? $(grep -c ' ok, ' $A/r$np.txt) ok, $(grep -c FAILED $A/r$np.txt) failed"
  rm -rf $A/r$np/r*/logs
  CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((np-1))) timeout 60 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c40 --mpirun --ranks $np --ops all_reduce --min 8 --max 64K --iters 100 --warmup 10 --timeout 30 \
    --configs tcpxr-gpu,tcpxr-gpu+old --variant old:$OLD --out $A/g$np > $A/g$np.txt 2>&1
  el "g$np rc=$? $(grep -c ' ok, ' $A/g$np.txt) ok, $(grep -c FAILED $A/g$np.txt) failed"
  rm -rf $A/g$np/logs
done
timeout 25 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c40 --mpirun --ranks 4 --ops all_reduce --min 8 --max 64K --iters 2 --warmup 1 --timeout 20 \
  --configs tcpxr-host --env NCCL_DEBUG_SUBSYS=INIT,NET,TUNING --out $A/t4 > $A/t4.txt 2>&1
grep -h "AllReduce:" $A/t4/logs/all_reduce.tcpxr-host.* | sed -E 's/^.*NCCL INFO //; s/0x[0-9a-f]+//g; s/opCount [0-9a-f]+//' | sort | uniq -c > $A/tuning-choices.txt 2>&1
rm -rf $A/t4/logs
C40=NCCL_NET_PLUGIN=$PWD/dist/c40/libnccl-net-tcpxr.so
for pass in 1 2 3; do for v in old c40 eager; do for lo in 32K 4K; do
  case $v in old) vs=(--variant v:$OLD);; c40) vs=(--variant v:$C40);; eager) vs=(--variant v:$C40 --variant v:NCCL_RUNTIME_CONNECT=0);; esac
  timeout 30 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c40 --mpirun --ranks 4 --ops all_reduce --min $lo --max 32K --iters 200 --warmup 20 --timeout 20 \
    --configs tcpxr-host+v "${vs[@]}" --out $A/order-$v-$lo-$pass > $A/order-$v-$lo-$pass.txt 2>&1
  el "order $v from $lo pass $pass: $(awk '/^ +32768 /{print $6}' $A/order-$v-$lo-$pass/all_reduce.tcpxr-host+v.txt)"
done; done; done
rm -rf $A/order-*/logs
timeout 60 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c40 --mpirun --ranks 4 --ops all_reduce --min 8 --max 64K --iters 200 --warmup 20 --timeout 30 --repeat 2 \
  --configs socket,socket+eager --variant eager:NCCL_RUNTIME_CONNECT=0 --out $A/s4 > $A/s4.txt 2>&1
el "s4 rc=$? $(grep -c ' ok, ' $A/s4.txt) ok, $(grep -c FAILED $A/s4.txt) failed"
rm -rf $A/s4/r*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
