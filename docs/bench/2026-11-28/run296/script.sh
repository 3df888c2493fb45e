#!/bin/bash
# run296 (a 2-GPU host): run 295 found GPU buffers' collectives slower than host buffers exactly
# where tcpxr's tuner keeps NCCL on 4 channels (a per-rank share below 32 MiB: 4-32 MiB at 2 ranks),
# and faster from 64 MiB, where NCCL uses the 8 tcpxr has it build: NCCL's kernel unpacks bounce
# pages at about 2.5 GB/s a channel. Does lifting that cap close the gap? dist/c35, 2 ranks one per
# GPU, all_reduce, all_gather, reduce_scatter 4-128 MiB, 20 iterations, three passes: host buffers,
# GPU buffers, GPU buffers with NCCL_MIN_NCHANNELS=8 set (the tuner then leaves NCCL's channel count
# alone: all 8 at these sizes), GPU buffers with the copy engine on every connection (64K).
cd "$(dirname "$0")/.."; A=/tmp/run296; source dist/common.sh
start_run; echo "c35: $(cat dist/c35/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
CUDA_VISIBLE_DEVICES=0,1 timeout 330 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c35 --mpirun --ranks 2 --ops all_reduce,all_gather,reduce_scatter --min 4M --max 128M --iters 20 --warmup 5 --timeout 60 --repeat 3 \
  --configs tcpxr-host,tcpxr-gpu,tcpxr-gpu+m8,tcpxr-gpu+ce --variant m8:NCCL_MIN_NCHANNELS=8 --variant ce:NCCL_TCPXR_GPU_COPY_BYTES=64K --env NCCL_DEBUG_SUBSYS=INIT,NET,TUNING --out $A/g > $A/g.txt 2>&1
el "g rc=$? $(grep -c ' ok, ' $A/g.txt) ok, $(grep -c FAILED $A/g.txt) failed"
for c in tcpxr-host tcpxr-gpu tcpxr-gpu+m8; do echo "== $c"; grep -h "AllReduce:\|AllGather:\|ReduceScatter:" $A/g/r1/logs/*.$c.nccl.* | sed -E 's/^.*NCCL INFO //; s/0x[0-9a-f]+//g; s/opCount [0-9a-f]+//' | sort | uniq -c | sort -rn | head -40; done > $A/tuning-choices.txt 2>&1
rm -rf $A/g/r2/logs $A/g/r3/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
