#!/bin/bash
# run254 (a 4-GPU host; 2026-11-27, twenty-ninth session): issue 31's table on main (c17, 56e8f4b)
# in three calls on one warm machine, PART a, b, c:
#  a, b: 4 ranks one per GPU, all_reduce, all_gather, reduce_scatter, sendrecv 8 B-512 MiB, 20
#        iterations, -c 1: the four Socket tunings, tcpxr with host and with GPU buffers; pass 1
#        (t4/r1) and pass 2 (t4/r2, the configs in another order); b adds the 4-rank correctness
#        set one per GPU (NCCL's choice, Ring, Tree; host and GPU buffers, 8 B-32 MiB).
#  c:    2 ranks one per GPU (GPUs 0-1), the same table, one pass (t2); then the tuner's pool cap's
#        correctness: 3 and 4 ranks on GPU 0 under MPS with NCCL_TCPXR_IO_THREADS=2 (the pool the
#        cap acts on), host and GPU buffers, NCCL's choice, Ring, Tree, 8 B-32 MiB.
# GPU buffers on their own GPU per rank also test BENCHMARKS' guess that the one-GPU gap (GPU
# sendrecv 1.14-1.26x host's time) is the shared host-to-GPU copy path.
PART=${1:?a, b or c}
cd "$(dirname "$0")/.."; A=/tmp/run254$PART; source dist/common.sh
start_run
echo "c17: $(cat dist/c17/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
ALL=socket,socket-1x1,socket-2x2,socket-4x4,tcpxr-host,tcpxr-gpu
ROT=tcpxr-host,tcpxr-gpu,socket-4x4,socket-2x2,socket-1x1,socket
t(){ local out=$1 ranks=$2 configs=$3 lim=$4
  timeout $lim python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c17 --mpirun --ranks $ranks --ops all_reduce,all_gather,reduce_scatter,sendrecv --configs $configs --min 8 --max 512M --iters 20 --warmup 5 --timeout 120 --out $A/$out > $A/$(echo $out | tr / -).txt 2>&1
  el "$out rc=$? $(grep -c ' ok, ' $A/$(echo $out | tr / -).txt) ok, $(grep -c FAILED $A/$(echo $out | tr / -).txt) failed"; }
ck(){ local name=$1; shift
  for algo in NCCL Ring Tree; do
    al=(); [ $algo != NCCL ] && al=(--algo $algo)
    timeout 100 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c17 "$@" "${al[@]}" --ops all_reduce,sendrecv --configs tcpxr-host,tcpxr-gpu --max 32M --iters 2 --warmup 1 --timeout 60 --out $A/$name-$algo > $A/$name-$algo.txt 2>&1
    el "$name $algo rc=$? $(grep -c ' ok, ' $A/$name-$algo.txt) ok, $(grep -c FAILED $A/$name-$algo.txt) failed"
  done; }
case $PART in
  a) t t4/r1 4 $ALL 520;;
  b) t t4/r2 4 $ROT 470; ck check4 --mpirun --ranks 4;;
  c) t t2 2 $ALL 330
     for np in 3 4; do CUDA_VISIBLE_DEVICES=0 ck check$np-pool2 --one-gpu --mps --ranks $np --env NCCL_TCPXR_IO_THREADS=2; done
     grep -rh "tuner: the I/O pool" $A/check*/logs 2>/dev/null | sed 's/^[^ ]* //' | sort | uniq -c | head > $A/cap-lines.txt;;
esac
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
