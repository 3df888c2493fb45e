#!/bin/bash
# run240 (a 4-GPU host, 64 cores; 2026-11-27, twenty-seventh session): 0d2bc6a (copies complete
# through a pinned word written by cuStreamWriteValue64, not events; dist/c5) against 623727a
# (events; dist/c4). 1) The GPU test binaries of c5 on GPU 0 with one hardware queue and under MPS;
# the correctness set on GPU 0 (checks: 3 and 4 ranks under MPS, host and GPU buffers, NCCL's
# choice, Ring, Tree; 4 ranks GPU buffers with one queue). 2) One rank per GPU, sendrecv 1-512 MiB,
# 10 iterations: c5 (host and GPU buffers) and c4 (GPU buffers) alternated A B A B, at 2 ranks
# (GPUs 0-1) and 4. 3) 4 ranks one per GPU, c5: all_reduce and sendrecv 8 B-32 MiB -c 1, GPU
# buffers, NCCL's choice, Ring, Tree.
cd "$(dirname "$0")/.."; A=/tmp/run240; source dist/common.sh
start_run
{ echo "new: $(cat dist/c5/commit.txt)"; echo "old: $(cat dist/c4/commit.txt)"; } >> $A/machine.txt
tests_228
L=dist/c5
gt(){ for t in gpu_hazard gpu_copy_in gpu device_unpack_peers; do echo "== $t"; timeout 120 $L/deps/$t --include-ignored --test-threads=1 --nocapture; echo "== $t rc=$?"; done; }
( export TCPXR_REQUIRE_GPU=1 TCPX_EMU_LIB=$PWD/$L/libtcpx_emu.so TCPXR_BENCH=$PWD/$L/tcpxr-bench CUDA_DEVICE_MAX_CONNECTIONS=1 CUDA_VISIBLE_DEVICES=0; gt ) > $A/gpu-tests-1queue.txt 2>&1
el "GPU tests, one queue: $(grep -h '^== .* rc=' $A/gpu-tests-1queue.txt | tr '\n' ' ')"
mps_on
( export TCPXR_REQUIRE_GPU=1 TCPX_EMU_LIB=$PWD/$L/libtcpx_emu.so TCPXR_BENCH=$PWD/$L/tcpxr-bench CUDA_VISIBLE_DEVICES=0; gt ) > $A/gpu-tests-mps.txt 2>&1
el "GPU tests, MPS: $(grep -h '^== .* rc=' $A/gpu-tests-mps.txt | tr '\n' ' ')"
mps_off
checks $L
export CUDA_VISIBLE_DEVICES=0,1,2,3
for np in 2 4; do
  for p in 1 2; do
    timeout 100 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c5 --mpirun --ranks $np --ops sendrecv --min 1M --max 512M --iters 10 --warmup 3 --timeout 60 --configs tcpxr-host,tcpxr-gpu --out $A/s$np-new-$p > $A/s$np-new-$p.txt 2>&1
    el "s$np-new-$p rc=$? $(grep -c ' ok, ' $A/s$np-new-$p.txt) ok"
    timeout 100 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c4 --mpirun --ranks $np --ops sendrecv --min 1M --max 512M --iters 10 --warmup 3 --timeout 60 --configs tcpxr-gpu --out $A/s$np-old-$p > $A/s$np-old-$p.txt 2>&1
    el "s$np-old-$p rc=$? $(grep -c ' ok, ' $A/s$np-old-$p.txt) ok"
  done
done
for algo in NCCL Ring Tree; do
  al=(); [ $algo != NCCL ] && al=(--algo $algo)
  timeout 100 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir $L --mpirun --ranks 4 "${al[@]}" --ops all_reduce,sendrecv --configs tcpxr-gpu --max 32M --iters 2 --warmup 1 --timeout 60 --out $A/check-4gpus-$algo > $A/check-4gpus-$algo.txt 2>&1
  el "check 4 ranks one per GPU $algo rc=$? $(grep -c ' ok, ' $A/check-4gpus-$algo.txt) ok, $(grep -c FAILED $A/check-4gpus-$algo.txt) failed"
done
grep -r -h 'stats receive copies' $A/s*/logs 2>/dev/null | sort | uniq > $A/copy-counters.txt
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
