#!/bin/bash
# run298 (a 4-GPU host, one rank per GPU): 1. Item 4 at 4 ranks with the tuner row of fabe4c6f
# (dist/c36: where NCCL's kernel places collective receives from host memory, shares of 4-32 MiB
# keep the 8 built channels; at 4 ranks all_reduce of 16-128 MiB) against 8be9ac76 (dist/c35)
# through NCCL_NET_PLUGIN: all_reduce and sendrecv 8-128 MiB, 20 iterations, two passes, host
# buffers, GPU buffers (c36), GPU buffers (c35); -c 1.
# 2. run293's question: at 4 ranks all_reduce of 8-16 KiB trails Socket by 13-15 us in the tree's
# LL on 2-4 channels; would the ring serve tcpxr better there? all_reduce 4-64 KiB, 200
# iterations, two passes: tcpxr, tcpxr with NCCL_ALGO=Ring, tcpxr without its tuner, Socket
# default and 1x1; and NCCL's choices (TUNING, 2 iterations).
cd "$(dirname "$0")/.."; A=/tmp/run298; source dist/common.sh
start_run; echo "c35: $(cat dist/c35/commit.txt); c36: $(cat dist/c36/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
OLD=NCCL_NET_PLUGIN=$PWD/dist/c35/libnccl-net-tcpxr.so
timeout 240 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c36 --mpirun --ranks 4 --ops all_reduce,sendrecv --min 8M --max 128M --iters 20 --warmup 5 --timeout 60 --repeat 2 \
  --configs tcpxr-host,tcpxr-gpu,tcpxr-gpu+old --variant old:$OLD --out $A/g > $A/g.txt 2>&1
el "g rc=$? $(grep -c ' ok, ' $A/g.txt) ok, $(grep -c FAILED $A/g.txt) failed"
rm -rf $A/g/r2/logs
timeout 150 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c36 --mpirun --ranks 4 --ops all_reduce --min 4K --max 64K --iters 200 --warmup 20 --timeout 20 --repeat 2 \
  --configs tcpxr-host,tcpxr-host+ring,tcpxr-host+nt,socket,socket-1x1 --variant ring:NCCL_ALGO=Ring --variant nt:NCCL_TCPXR_TUNER=0 --out $A/r > $A/r.txt 2>&1
el "r rc=$? $(grep -c ' ok, ' $A/r.txt) ok, $(grep -c FAILED $A/r.txt) failed"
rm -rf $A/r/r1/logs $A/r/r2/logs
timeout 40 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c36 --mpirun --ranks 4 --ops all_reduce --min 4K --max 64K --iters 2 --warmup 1 --timeout 25 \
  --configs tcpxr-host,tcpxr-host+nt --variant nt:NCCL_TCPXR_TUNER=0 --env NCCL_DEBUG_SUBSYS=INIT,NET,TUNING --out $A/tuning > $A/tuning.txt 2>&1
for c in tcpxr-host tcpxr-host+nt; do echo "== $c"; grep -h "AllReduce:" $A/tuning/logs/all_reduce.$c.* | sed -E 's/^.*NCCL INFO //; s/0x[0-9a-f]+//g; s/opCount [0-9a-f]+//' | sort | uniq -c; done > $A/tuning-choices.txt 2>&1
rm -rf $A/tuning/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
