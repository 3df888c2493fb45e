#!/bin/bash
# run284 (one H200, 16 cores, under MPS: no 4-GPU host was lent; 2026-11-28, thirty-second session): ae27a273 (dist/c31), the
# tuner's below-bulk cap extended to the tree's LL and LL128, against 04fef03a (dist/c30) in the
# same run: 4 ranks on GPU 0 under MPS, each its own NCCL host, all_reduce 4-256 KiB, 200 iterations, three passes in rotated
# order, with Socket default and 1x1 (run 283, one per GPU: tcpxr's 32 KiB in the tree's LL on 8
# channels, 0.53-0.74 of Socket); NCCL's choices under c31 (TUNING, 2 iterations); 2 ranks the same
# sizes, c30 against c31, two passes; 4 ranks with the tree forced, 8 B-1 MiB, -c 1.
cd "$(dirname "$0")/.."; A=/tmp/run284; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c30: $(cat dist/c30/commit.txt); c31: $(cat dist/c31/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || { NT=/tmp/nt-2.28.3/build; build_tests_in /tmp/nt-2.28.3 /usr 16; }
NEW=new:NCCL_NET_PLUGIN=$PWD/dist/c31/libnccl-net-tcpxr.so
timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c30 --one-gpu --mps --ranks 4 --ops all_reduce --min 4K --max 256K --iters 200 --warmup 20 --timeout 30 --repeat 3 \
  --configs tcpxr-host,tcpxr-host+new,socket,socket-1x1 --variant $NEW --out $A/s4 > $A/s4.txt 2>&1
el "s4 rc=$? $(grep -c ' ok, ' $A/s4.txt) ok, $(grep -c FAILED $A/s4.txt) failed"
timeout 30 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c31 --one-gpu --mps --ranks 4 --ops all_reduce --min 4K --max 256K --iters 2 --warmup 1 --timeout 25 \
  --configs tcpxr-host --env NCCL_DEBUG_SUBSYS=INIT,NET,TUNING --out $A/tuning > $A/tuning.txt 2>&1
el "tuning rc=$? $(grep -c ' ok, ' $A/tuning.txt) ok"
grep -h "AllReduce:" $A/tuning/logs/* | sed 's/^.*NCCL INFO //' | sort | uniq -c > $A/tuning-choices.txt
timeout 60 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c30 --one-gpu --mps --ranks 2 --ops all_reduce --min 4K --max 256K --iters 200 --warmup 20 --timeout 25 --repeat 2 \
  --configs tcpxr-host,tcpxr-host+new --variant $NEW --out $A/s2 > $A/s2.txt 2>&1
el "s2 rc=$? $(grep -c ' ok, ' $A/s2.txt) ok, $(grep -c FAILED $A/s2.txt) failed"
timeout 40 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c31 --one-gpu --mps --ranks 4 --algo Tree --ops all_reduce --max 1M --iters 2 --warmup 1 --timeout 30 \
  --configs tcpxr-host --out $A/tree4 > $A/tree4.txt 2>&1
el "tree4 rc=$? $(grep -c ' ok, ' $A/tree4.txt) ok, $(grep -c FAILED $A/tree4.txt) failed"
el "plugins: $(grep -h 'Successfully loaded external network plugin' $A/s4/r1/logs/* | sed 's/.*plugin //' | sort | uniq -c | tr '\n' ' ')"
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
