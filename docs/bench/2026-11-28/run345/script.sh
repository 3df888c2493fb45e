#!/bin/bash
# run345 (2x H200: 2 ranks one per GPU; or mps2: 2 ranks on GPU 0 under MPS): the one-step
# collectives' 1-2 us (all_gather, reduce_scatter of 32-128 B at 2 ranks; run 343: not NCCL's
# proxy taking operations late) is per operation, not per message. Two per-operation parts of
# tcpxr that Socket runs lack: its tuner (NCCL calls getCollInfo for every collective; run 208's
# variant without it was 0.2-1.3 us faster but also built fewer channels) and its I/O pool (idle
# at these sizes, run 307, but its spinners share the cores). main's head (dist/c53) at its
# defaults, with NCCL_TCPXR_TUNER=0 and with NCCL_TCPXR_IO_THREADS=0, against Socket default and
# 1x1; all_gather, reduce_scatter and all_reduce (the control) 8 B-1 KiB, 200 iterations, -N 3,
# three passes alternated.
cd "$(dirname "$0")/.."; A=/tmp/run345; source dist/common.sh
start_run; echo "c53: $(cat dist/c53/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
case ${1:-gpu2} in
  mps2) export CUDA_VISIBLE_DEVICES=0; SHAPE=(--one-gpu --mps --ranks 2);;
  gpu2) export CUDA_VISIBLE_DEVICES=0,1; SHAPE=(--mpirun --ranks 2);;
esac
echo "shape: ${1:-gpu2} ${SHAPE[*]}" >> $A/machine.txt
timeout 420 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c53 "${SHAPE[@]}" --ops all_gather,reduce_scatter,all_reduce --min 8 --max 1K --iters 200 --warmup 20 --cycles 3 --timeout 30 --repeat 3 \
  --configs tcpxr-host,tcpxr-host+notuner,tcpxr-host+nopool,socket,socket-1x1 --variant notuner:NCCL_TCPXR_TUNER=0 --variant nopool:NCCL_TCPXR_IO_THREADS=0 --out $A/pc > $A/pc.txt 2>&1
el "pc rc=$? $(grep -c ' ok, ' $A/pc.txt) ok, $(grep -c FAILED $A/pc.txt) failed"
grep -h "tuner\|TUNER" $A/pc/r1/logs/all_gather.tcpxr-host* 2>/dev/null | sed "s/^.*NCCL INFO //" | sort | uniq -c | head -20 > $A/pc-init.txt
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
