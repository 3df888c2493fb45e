#!/bin/bash
# run260 (a 4-GPU host, 64 cores; 2026-11-27, thirtieth session): main at 682b66f3 (dist/c21), two
# calls on one warm machine, PART a and b.
#  a: the bulk table owed since run 256: 4 ranks one per GPU, all_reduce, all_gather,
#     reduce_scatter 8-512 MiB, all four Socket tunings, tcpxr host and GPU buffers, 10 iterations,
#     -c 1, two passes in rotated order (--repeat 2): items 2 and 4 at 4 ranks.
#  b: item 3's ring at 4 ranks with each thread's cores busy and the stripes' counters (as prepared
#     in dist/run257.sh); item 4: 4-rank sendrecv 8-512 MiB host against GPU buffers (two passes),
#     and 2 ranks (GPUs 0-1) GPU and host buffers' sendrecv with 1, 2 and 4 stripes (as prepared
#     in dist/run259.sh), with the copy counters.
PART=${1:?a or b}
cd "$(dirname "$0")/.."; A=/tmp/run260$PART; source dist/common.sh
start_run; echo "c21: $(cat dist/c21/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
L=dist/c21
case $PART in
  a) timeout 500 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir $L --mpirun --ranks 4 --ops all_reduce,all_gather,reduce_scatter --min 8M --max 512M --iters 10 --warmup 3 --timeout 90 --repeat 2 \
       --configs socket,socket-1x1,socket-2x2,socket-4x4,tcpxr-host,tcpxr-gpu --out $A/t4 > $A/t4.txt 2>&1
     el "t4 rc=$? $(grep -c ' ok, ' $A/t4.txt) ok, $(grep -c FAILED $A/t4.txt) failed";;
  b) for s in 512K 4M; do
       TCPXR_LOG=info NCCL_TCPXR_STATS=1 timeout 100 python3 dist/cpu_sample.py tcpxr-bench -- $L/tcpxr-bench ring --ranks 4 --channels 8 --size $s --seconds 5 --tcp-connections 8 > $A/ring-$s.txt 2>&1
       el "ring $s rc=$? $(grep -a -E '^ +(tcpxr|tcp x8) +all' $A/ring-$s.txt | tr -s ' ' | paste -sd';')"
     done
     timeout 150 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir $L --mpirun --ranks 4 --ops sendrecv --min 8M --max 512M --iters 10 --warmup 3 --timeout 60 --repeat 2 \
       --configs tcpxr-host,tcpxr-gpu --out $A/sr4 > $A/sr4.txt 2>&1
     el "sr4 rc=$? $(grep -c ' ok, ' $A/sr4.txt) ok"
     CUDA_VISIBLE_DEVICES=0,1 timeout 240 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir $L --mpirun --ranks 2 --ops sendrecv --min 8M --max 512M --iters 10 --warmup 3 --timeout 60 --repeat 2 \
       --configs tcpxr-gpu,tcpxr-gpu+s1,tcpxr-gpu+s2,tcpxr-host,tcpxr-host+s1,tcpxr-host+s2 --variant s1:NCCL_TCPXR_STRIPES=1 --variant s2:NCCL_TCPXR_STRIPES=2 --out $A/s2r > $A/s2r.txt 2>&1
     el "s2r rc=$? $(grep -c ' ok, ' $A/s2r.txt) ok"
     for f in $A/sr4/r*/logs/sendrecv.tcpxr-gpu* $A/s2r/r*/logs/sendrecv.tcpxr-gpu*; do echo "$(echo $f | sed "s#$A/##"): $(grep -ho 'copies into GPU memory.*' $f | head -1)"; done > $A/copy-counters.txt 2>&1;;
esac
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
