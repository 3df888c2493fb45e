#!/bin/bash
# run285 (a 2-GPU host): item 4, demote only what the copy engine reads
# (docs/bench/2026-11-28/run279/demote-copies.patch on main; dist/c32 = main + patch, dist/c31-like
# dist/cM = main). GPU tests gpu_demote and gpu_copy_in with the patch (default, one queue, MPS);
# 2 ranks one per GPU, sendrecv, all_reduce, all_gather 8-512 MiB, 10 iterations, three passes:
# main (demote off) against the patch with NCCL_TCPXR_BOUNCE_DEMOTE=1; then the 3-4-rank
# correctness set with it on.
cd "$(dirname "$0")/.."; A=/tmp/run285; source dist/common.sh
start_run; echo "cM: $(cat dist/cM/commit.txt); c32: $(cat dist/c32/commit.txt)" >> $A/machine.txt
grep -o -w cldemote /proc/cpuinfo | sort | uniq -c >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
export TCPXR_REQUIRE_GPU=1
for t in gpu_demote gpu_copy_in; do
  CUDA_VISIBLE_DEVICES=0 timeout 60 dist/c32/deps/$t --include-ignored --test-threads=1 > $A/$t-default.txt 2>&1; el "$t default rc=$? $(grep -h '^test result' $A/$t-default.txt)"
  CUDA_VISIBLE_DEVICES=0 CUDA_DEVICE_MAX_CONNECTIONS=1 timeout 60 dist/c32/deps/$t --include-ignored --test-threads=1 > $A/$t-1queue.txt 2>&1; el "$t one queue rc=$? $(grep -h '^test result' $A/$t-1queue.txt)"
done
mps_on; CUDA_VISIBLE_DEVICES=0 timeout 60 dist/c32/deps/gpu_copy_in --include-ignored --test-threads=1 > $A/gpu_copy_in-mps.txt 2>&1; el "gpu_copy_in MPS rc=$? $(grep -h '^test result' $A/gpu_copy_in-mps.txt)"; mps_off
NEW=dc:NCCL_NET_PLUGIN=$PWD/dist/c32/libnccl-net-tcpxr.so
CUDA_VISIBLE_DEVICES=0,1 timeout 380 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/cM --mpirun --ranks 2 --ops sendrecv,all_reduce,all_gather --min 8M --max 512M --iters 10 --warmup 3 --timeout 60 --repeat 3 \
  --configs tcpxr-host,tcpxr-gpu,tcpxr-gpu+dc --variant $NEW --variant dc:NCCL_TCPXR_BOUNCE_DEMOTE=1 --out $A/s > $A/s.txt 2>&1
el "s rc=$? $(grep -c ' ok, ' $A/s.txt) ok"
for f in $A/s/r*/logs/*.tcpxr-gpu*; do echo "$(echo $f | sed "s#$A/##"): $(grep -ho 'copies into GPU memory.*' $f | head -1) $(grep -ho '[0-9.]* MB demoted' $f | head -1)"; done > $A/copy-counters.txt 2>&1
export NCCL_TCPXR_BOUNCE_DEMOTE=1; checks dist/c32; unset NCCL_TCPXR_BOUNCE_DEMOTE   # the runner forwards inherited NCCL_* (settings files say so)
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
