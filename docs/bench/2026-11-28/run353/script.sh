#!/bin/bash
# run353 (a 4-GPU host; session 42): run 352 found tcpxr's all_reduce of 8 B-1 KiB at 4 ranks one per
# GPU faster with NCCL_TCPXR_TUNER=0 (8-64 B 43-45 us against 48-49, Socket 44-45), NCCL's choice
# the tree's LL on one channel either way. The tuner's switch carries two settings with it: the 8
# channels tcpxr has NCCL build (NCCL_MIN_NCHANNELS=8; NCCL's own 4 without) and the 10 Gb/s
# reported for lo with them (400 without). Which one costs? all_reduce 8 B-1 KiB, 200 iterations,
# -N 3: main (8 channels, 10 Gb/s), +sp400 (8 channels, 400 Gb/s), +ch4 (4 channels, 400 Gb/s, the
# tuner on), +notuner (4 channels, 400 Gb/s, no tuner), Socket default; three passes alternated at
# 4 ranks one per GPU, then two at 4 ranks on GPU 0 under MPS.
cd "$(dirname "$0")/.."; A=/tmp/run353; source dist/common.sh
start_run; echo "c53: $(cat dist/c53/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
CF=tcpxr-host,tcpxr-host+sp400,tcpxr-host+ch4,tcpxr-host+notuner,socket
VS=(--variant sp400:NCCL_TCPXR_SPEED_MBPS=400000 --variant ch4:NCCL_MIN_NCHANNELS=4 --variant notuner:NCCL_TCPXR_TUNER=0)
timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c53 --mpirun --ranks 4 --ops all_reduce --min 8 --max 1K --iters 200 --warmup 20 --cycles 3 --timeout 40 --repeat 3 \
  --configs $CF "${VS[@]}" --out $A/g4 > $A/g4.txt 2>&1
el "g4 rc=$? $(grep -c ' ok, ' $A/g4.txt) ok, $(grep -c FAILED $A/g4.txt) failed"
for c in ${CF//,/ }; do el "g4 $c: $(grep -h -o '[0-9]* coll channels\|NCCL_TCPXR_SPEED_MBPS = [0-9]*' $A/g4/r1/logs/all_reduce.$c.* 2>/dev/null | sort | uniq -c | paste -sd' ')"; done
CUDA_VISIBLE_DEVICES=0 timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c53 --one-gpu --mps --ranks 4 --ops all_reduce --min 8 --max 1K --iters 200 --warmup 20 --cycles 3 --timeout 40 --repeat 2 \
  --configs $CF "${VS[@]}" --out $A/m4 > $A/m4.txt 2>&1
el "m4 rc=$? $(grep -c ' ok, ' $A/m4.txt) ok, $(grep -c FAILED $A/m4.txt) failed"
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
