#!/bin/bash
# run198 (a 2-GPU host; 2026-11-27, twenty-second session): 1af520f (dist/new: no read for the next
# header once a message's control bytes are in) against 8c46bbd (dist/head) and all four Socket
# tunings, 2 ranks one per GPU, all_reduce, all_gather, reduce_scatter, sendrecv 8 B-64 KiB,
# 200 iterations, three alternations (config order rotated); medians (dist/medtab.py). Then
# 1af520f checked: 3 and 4 ranks on GPU 0 under MPS, host and GPU buffers, NCCL's choice, Ring,
# Tree, all_reduce and sendrecv 8 B-32 MiB -c 1; 4 ranks, GPU buffers, CUDA_DEVICE_MAX_CONNECTIONS=1.
cd "$(dirname "$0")/.."; A=/tmp/run198; source dist/common.sh
export CUDA_VISIBLE_DEVICES=0,1; trap "tar cJf $R/run198.tar.xz -C /tmp run198" EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/new/commit.txt dist/head/commit.txt; uptime; } > $A/machine.txt 2>&1
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 32
orders=(socket,socket-1x1,socket-2x2,socket-4x4,tcpxr-host tcpxr-host,socket-4x4,socket-2x2,socket-1x1,socket socket-2x2,tcpxr-host,socket,socket-4x4,socket-1x1)
ops=all_reduce,all_gather,reduce_scatter,sendrecv
old(){ timeout 100 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/head --mpirun --ranks 2 --ops $ops --max 64K --iters 200 --warmup 20 --timeout 30 --configs tcpxr-host --out $A/o$1 > $A/o$1.txt 2>&1; el "o$1 rc=$?"; }
for i in 1 2 3; do
  [ $i = 2 ] || old $i
  timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/new --mpirun --ranks 2 --ops $ops --max 64K --iters 200 --warmup 20 --timeout 30 --configs ${orders[$((i-1))]} --out $A/r$i > $A/r$i.txt 2>&1
  el "r$i rc=$? $(grep -c ' ok, ' $A/r$i.txt) ok, $(grep -c FAILED $A/r$i.txt) failed"
  [ $i = 2 ] && old $i
  mkdir -p $A/m/$i; cp $A/r$i/*.txt $A/m/$i/; for f in $A/o$i/*.tcpxr-host.txt; do b=$(basename $f); cp $f $A/m/$i/${b/tcpxr-host/tcpxr-8c46bbd}; done
done
python3 dist/medtab.py $A/m/1 $A/m/2 $A/m/3 > $A/medians.txt 2>&1; el "medians rc=$?"
export CUDA_VISIBLE_DEVICES=0
for np in 3 4; do for algo in NCCL Ring Tree; do
  al=(); [ $algo != NCCL ] && al=(--algo $algo)
  timeout 100 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/new --one-gpu --mps --ranks $np "${al[@]}" --ops all_reduce,sendrecv --configs tcpxr-host,tcpxr-gpu --max 32M --iters 2 --warmup 1 --timeout 60 --out $A/check-$np-$algo > $A/check-$np-$algo.txt 2>&1
  el "check $np ranks $algo rc=$? $(grep -c ' ok, ' $A/check-$np-$algo.txt) ok, $(grep -c FAILED $A/check-$np-$algo.txt) failed"
done; done
timeout 100 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/new --one-gpu --ranks 4 --ops all_reduce,sendrecv --configs tcpxr-gpu --env CUDA_DEVICE_MAX_CONNECTIONS=1 --max 32M --iters 2 --warmup 1 --timeout 90 --out $A/check-4-cdmc1 > $A/check-4-cdmc1.txt 2>&1
el "check 4 ranks CUDA_DEVICE_MAX_CONNECTIONS=1 rc=$? $(grep -c ' ok, ' $A/check-4-cdmc1.txt) ok, $(grep -c FAILED $A/check-4-cdmc1.txt) failed"
el done
